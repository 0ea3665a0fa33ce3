// gRPC glue for gpuspy.v1.Ingest: reads the stream, hands each message to BatchIngestor, maps
// statuses. No ingest logic lives here.
#pragma once

#include "collector/ingest/batch_ingestor.h"
#include "collector/ingest/connection_registry.h"
#include "gpuspy/v1/services.grpc.pb.h"

namespace gpuspy::collector {

class IngestService final : public v1::Ingest::Service {
 public:
  IngestService(BatchIngestor* ingestor, ConnectionRegistry* connections, IngestCounters* counters)
      : ingestor_(ingestor), connections_(connections), counters_(counters) {}

  grpc::Status Stream(grpc::ServerContext* context,
                      grpc::ServerReaderWriter<v1::ServerMessage, v1::ClientMessage>* stream)
      override;

 private:
  BatchIngestor* ingestor_;
  ConnectionRegistry* connections_;
  IngestCounters* counters_;
};

// absl::Status -> grpc::Status with the same code and message.
grpc::Status ToGrpc(const absl::Status& status);

}  // namespace gpuspy::collector
