// gpuspy.v1.Control: on-demand capture windows. The request shapes are fixed in the proto so a
// hub can forward them; dormant injection and the command push are the attach work. Until then
// every call answers UNIMPLEMENTED with a message saying so, rather than pretending to work.
#pragma once

#include "gpuspy/v1/services.grpc.pb.h"

namespace gpuspy::collector {

class ControlService final : public v1::Control::Service {
 public:
  grpc::Status Attach(grpc::ServerContext*, const v1::AttachRequest*,
                      v1::AttachResponse*) override;
  grpc::Status Detach(grpc::ServerContext*, const v1::DetachRequest*,
                      v1::DetachResponse*) override;
};

}  // namespace gpuspy::collector
