#include "collector/http/api_routes.h"

#include "httplib.h"

namespace gpuspy::collector {

std::string RouteRequest::job() const { return http.matches[1]; }

const std::vector<ApiRoute>& ApiRoutes() {
  using enum HttpMethod;
  using enum RouteAccess;
  static const std::vector<ApiRoute> routes = {
      // For load balancers and kubelet probes, which cannot carry a secret: says nothing beyond
      // being up.
      {kGet, "/healthz", &HealthzRoute, kOpen, false},
      {kGet, "/api/jobs", &JobsRoute, kRead, true},
      {kGet, "/metrics", &MetricsRoute, kRead, false},
      {kGet, "/api/stats", &StatsRoute, kRead, true},
      {kGet, R"(/api/jobs/([^/]+)/steps)", &StepsRoute, kRead, true},
      {kGet, R"(/api/jobs/([^/]+)/report)", &ReportRoute, kRead, true},
      {kGet, R"(/api/jobs/([^/]+)/summary)", &SummaryRoute, kRead, true},
      {kGet, R"(/api/jobs/([^/]+)/events)", &EventsRoute, kRead, true},
      {kGet, R"(/api/jobs/([^/]+)/timeline)", &TimelineRoute, kRead, true},
      {kGet, R"(/api/jobs/([^/]+)/trace)", &TraceRoute, kRead, true},
      // Changes: the owner's or an admin's (the gate lets no one else this far).
      {kDelete, R"(/api/jobs/([^/]+))", &DeleteJobRoute, kManage, true},
      {kPost, R"(/api/jobs/([^/]+)/rename)", &RenameJobRoute, kManage, true},
      {kPost, R"(/api/jobs/([^/]+)/step-pattern)", &StepPatternRoute, kManage, true},
      {kGet, "/api/diff", &DiffRoute, kRead, true},
  };
  return routes;
}

}  // namespace gpuspy::collector
