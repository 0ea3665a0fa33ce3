// BatchSink over gRPC: the Ingest stream of gpuspyd, through IngestClient.
#pragma once

#include <memory>
#include <string>

#include "client/spill/batch_sink.h"
#include "client/transport/ingest_client.h"

namespace gpuspy::inject {

class GrpcBatchSink final : public BatchSink {
 public:
  GrpcBatchSink(std::string address, v1::CaptureMode mode)
      : address_(std::move(address)), mode_(mode) {}

  absl::StatusOr<uint64_t> Connect(const v1::ProcessIdentity& identity,
                                   absl::Duration timeout) override;
  absl::Status Deliver(const v1::EventBatch& batch, absl::Duration timeout) override;
  void Disconnect() override;
  bool Connected() const override { return client_ != nullptr && client_->connected(); }
  absl::Status Send(const v1::ClientMessage& message) override;
  std::vector<v1::Command> TakeCommands() override;

 private:
  std::string address_;
  v1::CaptureMode mode_;
  std::unique_ptr<IngestClient> client_;
};

}  // namespace gpuspy::inject
