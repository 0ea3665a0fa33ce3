#include "client/spill/grpc_batch_sink.h"

namespace gpuspy::inject {

absl::StatusOr<uint64_t> GrpcBatchSink::Connect(const v1::ProcessIdentity& identity,
                                                absl::Duration timeout) {
  client_ = std::make_unique<IngestClient>();
  client_->set_mode(mode_);
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

absl::Status GrpcBatchSink::Send(const v1::ClientMessage& message) {
  if (client_ == nullptr) return absl::UnavailableError("not connected");
  return client_->SendMessage(message);
}

std::vector<v1::Command> GrpcBatchSink::TakeCommands() {
  if (client_ == nullptr) return {};
  return client_->TakeCommands();
}

void GrpcBatchSink::Disconnect() {
  // Bounded: a wedged collector must not hold up the application's exit.
  if (client_ != nullptr) (void)client_->Close(absl::Seconds(1));
  client_.reset();
}

}  // namespace gpuspy::inject
