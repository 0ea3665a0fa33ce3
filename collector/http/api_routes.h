// The HTTP API's routes, as data: method, path pattern, handler, who may call it, and whether
// the handler reads the query string. HttpApi::Start registers them in one loop; the web
// viewer's own files are web_ui.h's.
//
//   GET /healthz                                           "ok" (open: probes carry no token)
//   GET /metrics                                           Prometheus exposition (metrics/)
//   GET /api/jobs
//   GET /api/stats
//   GET /api/jobs/{job}/steps[?process=P]
//   GET /api/jobs/{job}/report[?step=N | ?last=K | ?all=1][&process=P]
//   GET /api/jobs/{job}/summary
//   GET /api/jobs/{job}/events[?from=NS&to=NS&limit=N&process=P&cursor=C]   one page
//   GET /api/jobs/{job}/timeline?process=P&step=N        one step for the viewer's timeline
//   GET /api/jobs/{job}/trace[?steps=A-B&process=P]      Chrome/Perfetto trace JSON
//   DELETE /api/jobs/{job}[?force=1]                       delete a job (force: while live)
//   POST /api/jobs/{job}/rename?to=NEW                     rename a job
//   POST /api/jobs/{job}/step-pattern?pattern=RE           the job's own NVTX step pattern
//   GET /api/diff?a=JOB[@RANK][:STEPS]&b=...               why B is slower than A
//
// Bad parameters answer 400 with a message, unknown jobs 404, refusals 403, a live job or a
// taken name 409.
#pragma once

#include <string>
#include <vector>

#include "collector/http/query_params.h"
#include "collector/query/query_engine.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace gpuspy::collector {

enum class HttpMethod { kGet, kPost, kDelete };

// Who may call a route. The HTTP gate (collector/auth/http_gate.h) enforces it before routing,
// for every path: kOpen answers anyone, kRead needs a token (or the local owner), kManage the
// control token (or the local owner) and a same-site origin. tests/unit/http/api_routes_test.cc
// checks that the gate requires what each route declares.
enum class RouteAccess { kOpen, kRead, kManage };

// What a handler gets: the engine, the request (matches[1] is the {job} of the path), and its
// query string as ParseQuery reads it (empty for routes that do not read one).
struct RouteRequest {
  QueryEngine* engine;
  const httplib::Request& http;
  const QueryParams& params;
  // The path's {job} segment.
  std::string job() const;
};

using RouteHandler = void (*)(const RouteRequest& request, httplib::Response& res);

struct ApiRoute {
  HttpMethod method;
  const char* pattern;  // httplib's: a regex matched against the whole path
  RouteHandler handler;
  RouteAccess access;
  // False: the query string is not parsed (probes and scrapers, whose queries are not ours to
  // refuse); true: a malformed one is a 400 before the handler runs (query_params.h).
  bool reads_query;
};

// In registration order (httplib tries a method's routes in this order).
const std::vector<ApiRoute>& ApiRoutes();

// The handlers, by resource.
// collector_routes.cc: the collector as a whole.
void HealthzRoute(const RouteRequest& request, httplib::Response& res);
void MetricsRoute(const RouteRequest& request, httplib::Response& res);
void JobsRoute(const RouteRequest& request, httplib::Response& res);
void StatsRoute(const RouteRequest& request, httplib::Response& res);
// job_routes.cc: reading one job.
void StepsRoute(const RouteRequest& request, httplib::Response& res);
void ReportRoute(const RouteRequest& request, httplib::Response& res);
void SummaryRoute(const RouteRequest& request, httplib::Response& res);
void EventsRoute(const RouteRequest& request, httplib::Response& res);
void TimelineRoute(const RouteRequest& request, httplib::Response& res);
void TraceRoute(const RouteRequest& request, httplib::Response& res);
// job_admin_routes.cc: changing one job (job_admin.h).
void DeleteJobRoute(const RouteRequest& request, httplib::Response& res);
void RenameJobRoute(const RouteRequest& request, httplib::Response& res);
void StepPatternRoute(const RouteRequest& request, httplib::Response& res);
// diff_route.cc: two runs compared.
void DiffRoute(const RouteRequest& request, httplib::Response& res);

}  // namespace gpuspy::collector
