#include "inject/core/grpc_batch_sink.h"

namespace gpuspy::inject {

absl::StatusOr<uint64_t> GrpcBatchSink::Connect(const v1::ProcessIdentity& identity,
                                                absl::Duration timeout) {
  client_ = std::make_unique<IngestClient>();
  absl::Status st = client_->Connect(address_, identity, timeout);
  if (!st.ok()) {
    client_.reset();
    return st;
  }
  return client_->last_stored_sequence();
}

absl::Status GrpcBatchSink::Deliver(const v1::EventBatch& batch, absl::Duration timeout) {
  if (client_ == nullptr) return absl::UnavailableError("not connected");
  if (absl::Status st = client_->Send(batch); !st.ok()) return st;
  return client_->WaitForAcks(batch.sequence(), timeout);
}

void GrpcBatchSink::Disconnect() {
  // Bounded: a wedged collector must not hold up the application's exit.
  if (client_ != nullptr) (void)client_->Close(absl::Seconds(1));
  client_.reset();
}

}  // namespace gpuspy::inject
