#include "collector/http/http_reply.h"

#include <google/protobuf/struct.pb.h>

#include "absl/strings/str_cat.h"
#include "collector/http/query_params.h"
#include "httplib.h"

namespace gpuspy::collector {

int HttpCode(const absl::Status& st) {
  switch (st.code()) {
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kInvalidArgument: return 400;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition: return 409;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kResourceExhausted: return 503;  // shed load (analysis_budget.h)
    default: return 500;
  }
}

void ErrorReply(httplib::Response& res, int code, const std::string& message) {
  res.status = code;
  google::protobuf::Value v;  // only to reuse protobuf's JSON string escaping
  std::string text = message;
  // Protobuf prints a string that is not UTF-8 as '' and logs an ERROR; CheckRoute keeps such
  // bytes out of messages, this keeps any that slip through readable.
  if (!IsValidUtf8(text)) {
    for (char& c : text) {
      if (static_cast<unsigned char>(c) >= 0x80) c = '?';
    }
  }
  v.set_string_value(text);
  std::string quoted;
  (void)google::protobuf::util::MessageToJsonString(v, &quoted);
  res.set_content(absl::StrCat("{\"error\": ", quoted, "}\n"), "application/json");
}

void ErrorReply(httplib::Response& res, const absl::Status& status) {
  ErrorReply(res, HttpCode(status), std::string(status.message()));
}

void JsonReply(httplib::Response& res, const absl::StatusOr<std::string>& body) {
  if (!body.ok()) return ErrorReply(res, body.status());
  res.set_content(*body, "application/json");
}

}  // namespace gpuspy::collector
