// How the HTTP API answers: a status mapped to its HTTP code, an error as {"error": "..."}, a
// Query message as protobuf's JSON (field names as in the .proto). Every route answers through
// these, so the same failure reads the same on every route.
#pragma once

#include <string>

#include <google/protobuf/util/json_util.h>

#include "absl/status/statusor.h"

namespace httplib {
struct Response;
}  // namespace httplib

namespace gpuspy::collector {

// 404 unknown, 400 bad parameters, 403 refused, 409 live job or taken name, 503 shed load.
int HttpCode(const absl::Status& status);
// `message` as {"error": "..."} with `code`.
void ErrorReply(httplib::Response& res, int code, const std::string& message);
// A failed status as ErrorReply with its HttpCode.
void ErrorReply(httplib::Response& res, const absl::Status& status);
// The body as application/json, or the error.
void JsonReply(httplib::Response& res, const absl::StatusOr<std::string>& body);

template <typename Message>
absl::StatusOr<std::string> ToJson(const absl::StatusOr<Message>& m) {
  if (!m.ok()) return m.status();
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string out;
  auto st = google::protobuf::util::MessageToJsonString(*m, &out, options);
  if (!st.ok()) return absl::InternalError(std::string(st.message()));
  return out;
}

}  // namespace gpuspy::collector
