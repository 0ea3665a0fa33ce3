// gpuspy.v1.Control: gRPC glue for on-demand capture windows. The logic is in CaptureManager.
#pragma once

#include "collector/control/capture_manager.h"
#include "gpuspy/v1/services.grpc.pb.h"

namespace gpuspy::collector {

class ControlService final : public v1::Control::Service {
 public:
  explicit ControlService(CaptureManager* captures) : captures_(captures) {}

  grpc::Status Attach(grpc::ServerContext*, const v1::AttachRequest* request,
                      v1::AttachResponse* response) override;
  grpc::Status Detach(grpc::ServerContext*, const v1::DetachRequest* request,
                      v1::DetachResponse* response) override;
  grpc::Status GetCapture(grpc::ServerContext*, const v1::GetCaptureRequest* request,
                          v1::GetCaptureResponse* response) override;

 private:
  CaptureManager* captures_;
};

}  // namespace gpuspy::collector
