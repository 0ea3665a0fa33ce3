// Changing one job (job_admin.h): delete, rename, its own step pattern. The HTTP gate lets only
// the owner's or an admin's requests this far (RouteAccess::kManage).
#include "collector/http/api_routes.h"
#include "collector/http/http_reply.h"
#include "httplib.h"

namespace gpuspy::collector {

void DeleteJobRoute(const RouteRequest& request, httplib::Response& res) {
  if (absl::Status st = CheckRoute(request.job(), request.params, {"force"}); !st.ok()) {
    return ErrorReply(res, 400, std::string(st.message()));
  }
  absl::StatusOr<int64_t> force = IntParam(request.params, "force", 0);
  if (!force.ok()) return ErrorReply(res, 400, std::string(force.status().message()));
  v1::DeleteJobRequest r;
  r.set_job_id(request.job());
  r.set_force(*force != 0);
  JsonReply(res, ToJson(request.engine->admin()->DeleteJob(r)));
}

void RenameJobRoute(const RouteRequest& request, httplib::Response& res) {
  if (absl::Status st = CheckRoute(request.job(), request.params, {"to"}); !st.ok()) {
    return ErrorReply(res, 400, std::string(st.message()));
  }
  auto to = request.params.find("to");
  if (to == request.params.end() || to->second.empty()) {
    return ErrorReply(res, 400, "parameter 'to' (the new job id) is required");
  }
  v1::RenameJobRequest r;
  r.set_job_id(request.job());
  r.set_new_job_id(to->second);
  JsonReply(res, ToJson(request.engine->admin()->RenameJob(r)));
}

void StepPatternRoute(const RouteRequest& request, httplib::Response& res) {
  if (absl::Status st = CheckRoute(request.job(), request.params, {"pattern"}); !st.ok()) {
    return ErrorReply(res, 400, std::string(st.message()));
  }
  auto pattern = request.params.find("pattern");
  if (pattern == request.params.end()) {
    return ErrorReply(res, 400, "parameter 'pattern' (an RE2 regex; empty: gpuspyd's --step-pattern) is required");
  }
  v1::SetStepPatternRequest r;
  r.set_job_id(request.job());
  r.set_step_pattern(pattern->second);
  JsonReply(res, ToJson(request.engine->SetStepPattern(r)));
}

}  // namespace gpuspy::collector
