#include "collector/control/control_service.h"

#include "collector/rpc/grpc_status.h"

namespace gpuspy::collector {

grpc::Status ControlService::Attach(grpc::ServerContext*, const v1::AttachRequest* request,
                                    v1::AttachResponse* response) {
  return Reply(captures_->Attach(*request), response);
}

grpc::Status ControlService::Detach(grpc::ServerContext*, const v1::DetachRequest* request,
                                    v1::DetachResponse* response) {
  return Reply(captures_->Detach(*request), response);
}

grpc::Status ControlService::GetCapture(grpc::ServerContext*, const v1::GetCaptureRequest* request,
                                        v1::GetCaptureResponse* response) {
  absl::StatusOr<v1::Capture> r = captures_->Get(*request);
  if (!r.ok()) return ToGrpc(r.status());
  *response->mutable_capture() = *std::move(r);
  return grpc::Status::OK;
}

}  // namespace gpuspy::collector
