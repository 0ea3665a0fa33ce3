// Where encoded batches go: the collector (gRPC) in production, a fake in tests.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuspy/v1/identity.pb.h"
#include "gpuspy/v1/services.pb.h"
#include "gpuspy/v1/wire.pb.h"

namespace gpuspy::inject {

class BatchSink {
 public:
  virtual ~BatchSink() = default;
  // Opens a session for this process; returns the highest sequence the collector already stored.
  virtual absl::StatusOr<uint64_t> Connect(const v1::ProcessIdentity& identity,
                                           absl::Duration timeout) = 0;
  // Delivers one batch and waits for its acknowledgement. InvalidArgument means the collector
  // refused this batch for good (do not retry it); other errors mean "try again later".
  virtual absl::Status Deliver(const v1::EventBatch& batch, absl::Duration timeout) = 0;
  virtual void Disconnect() = 0;
  // Whether the session is still up (the collector may have ended it while we were idle).
  virtual bool Connected() const = 0;
  // Heartbeats and capture status; does not wait for anything.
  virtual absl::Status Send(const v1::ClientMessage& message) = 0;
  // Commands the collector pushed since the last call (attach / detach).
  virtual std::vector<v1::Command> TakeCommands() = 0;
};

}  // namespace gpuspy::inject
