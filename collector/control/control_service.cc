#include "collector/control/control_service.h"

namespace gpuspy::collector {

grpc::Status ControlService::Attach(grpc::ServerContext*, const v1::AttachRequest*,
                                    v1::AttachResponse*) {
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                      "attach is not available in this gpuspyd yet: processes capture "
                      "continuously from start (GPUSPY_MODE=always)");
}

grpc::Status ControlService::Detach(grpc::ServerContext*, const v1::DetachRequest*,
                                    v1::DetachResponse*) {
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                      "detach is not available in this gpuspyd yet");
}

}  // namespace gpuspy::collector
