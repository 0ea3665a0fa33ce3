// The collector as a whole: health, metrics, the job listing, the collector's counters.
#include "collector/http/api_routes.h"
#include "collector/http/http_reply.h"
#include "collector/metrics/collector_metrics.h"
#include "httplib.h"

namespace gpuspy::collector {

void HealthzRoute(const RouteRequest&, httplib::Response& res) {
  res.set_content("ok\n", "text/plain; charset=utf-8");
}

void MetricsRoute(const RouteRequest& request, httplib::Response& res) {
  res.set_content(CollectorMetrics(request.engine), "text/plain; version=0.0.4; charset=utf-8");
}

void JobsRoute(const RouteRequest& request, httplib::Response& res) {
  if (absl::Status st = CheckRoute("", request.params, {}); !st.ok()) {
    return ErrorReply(res, 400, std::string(st.message()));
  }
  JsonReply(res, ToJson(request.engine->ListJobs()));
}

void StatsRoute(const RouteRequest& request, httplib::Response& res) {
  if (absl::Status st = CheckRoute("", request.params, {}); !st.ok()) {
    return ErrorReply(res, 400, std::string(st.message()));
  }
  JsonReply(res, ToJson(absl::StatusOr<v1::GetStatsResponse>(request.engine->GetStats())));
}

}  // namespace gpuspy::collector
