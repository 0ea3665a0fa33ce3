// BatchSink over gRPC: the Ingest stream of gpuspyd, through IngestClient.
#pragma once

#include <memory>
#include <string>

#include "inject/core/batch_sink.h"
#include "inject/transport/ingest_client.h"

namespace gpuspy::inject {

class GrpcBatchSink final : public BatchSink {
 public:
  explicit GrpcBatchSink(std::string address) : address_(std::move(address)) {}

  absl::StatusOr<uint64_t> Connect(const v1::ProcessIdentity& identity,
                                   absl::Duration timeout) override;
  absl::Status Deliver(const v1::EventBatch& batch, absl::Duration timeout) override;
  void Disconnect() override;

 private:
  std::string address_;
  std::unique_ptr<IngestClient> client_;
};

}  // namespace gpuspy::inject
