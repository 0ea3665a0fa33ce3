// What the collector's gRPC handlers share (ingest, query, control, auth): the mapping of a
// component's absl::Status to the RPC's status, and Reply, the whole body of a handler that
// delegates to one component (validate, call, map the status: no logic here).
#pragma once

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/support/status.h"

namespace gpuspy::collector {

// absl::Status -> grpc::Status with the same code and message (absl's codes are gRPC's).
inline grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

// `result`'s value as the response, or its status.
template <typename Response>
grpc::Status Reply(absl::StatusOr<Response> result, Response* response) {
  if (!result.ok()) return ToGrpc(result.status());
  *response = std::move(*result);
  return grpc::Status::OK;
}

}  // namespace gpuspy::collector
