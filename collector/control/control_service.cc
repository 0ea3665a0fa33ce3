#include "collector/control/control_service.h"

#include "collector/ingest/ingest_service.h"

namespace gpuspy::collector {

grpc::Status ControlService::Attach(grpc::ServerContext*, const v1::AttachRequest* request,
                                    v1::AttachResponse* response) {
  absl::StatusOr<v1::AttachResponse> r = captures_->Attach(*request);
  if (!r.ok()) return ToGrpc(r.status());
  *response = *std::move(r);
  return grpc::Status::OK;
}

grpc::Status ControlService::Detach(grpc::ServerContext*, const v1::DetachRequest* request,
                                    v1::DetachResponse* response) {
  absl::StatusOr<v1::DetachResponse> r = captures_->Detach(*request);
  if (!r.ok()) return ToGrpc(r.status());
  *response = *std::move(r);
  return grpc::Status::OK;
}

grpc::Status ControlService::GetCapture(grpc::ServerContext*, const v1::GetCaptureRequest* request,
                                        v1::GetCaptureResponse* response) {
  absl::StatusOr<v1::Capture> r = captures_->Get(*request);
  if (!r.ok()) return ToGrpc(r.status());
  *response->mutable_capture() = *std::move(r);
  return grpc::Status::OK;
}

}  // namespace gpuspy::collector
