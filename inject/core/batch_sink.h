// Where encoded batches go: the collector (gRPC) in production, a fake in tests.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuspy/v1/identity.pb.h"
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
};

}  // namespace gpuspy::inject
