// Why B is slower than A: /api/diff?a=JOB[@RANK][:STEPS]&b=... (the CLI's `gpuspy diff`), compared
// by Query.DiffRuns.
#include "absl/strings/str_cat.h"
#include "collector/http/api_routes.h"
#include "collector/http/http_reply.h"
#include "httplib.h"

namespace gpuspy::collector {

void DiffRoute(const RouteRequest& request, httplib::Response& res) {
  const QueryParams& params = request.params;
  if (absl::Status st = CheckRoute("", params, {"a", "b"}); !st.ok()) {
    return ErrorReply(res, 400, std::string(st.message()));
  }
  v1::DiffRunsRequest diff_request;
  for (const char* side : {"a", "b"}) {
    auto it = params.find(side);
    if (it == params.end()) return ErrorReply(res, 400, absl::StrCat("parameter '", side, "' is required"));
    absl::StatusOr<v1::GetRunProfileRequest> r = RunProfileQuery(it->second);
    if (!r.ok()) return ErrorReply(res, 400, absl::StrCat(side, ": ", r.status().message()));
    *(side[0] == 'a' ? diff_request.mutable_a() : diff_request.mutable_b()) = std::move(*r);
  }
  absl::StatusOr<v1::DiffRunsResponse> diff = request.engine->DiffRuns(diff_request);
  if (!diff.ok()) return ErrorReply(res, diff.status());
  JsonReply(res, ToJson(absl::StatusOr<v1::RunDiff>(std::move(*diff->mutable_diff()))));
}

}  // namespace gpuspy::collector
