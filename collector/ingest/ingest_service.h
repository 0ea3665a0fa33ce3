// gRPC glue for gpuspy.v1.Ingest: reads the stream, hands each message to BatchIngestor, maps
// statuses. No ingest logic lives here.
#pragma once

#include "collector/ingest/batch_ingestor.h"
#include "collector/ingest/connection_registry.h"
#include "gpuspy/v1/services.grpc.pb.h"

namespace gpuspy::collector {

// Who may open an ingest stream and as whom its process is recorded (collector/auth).
class IngestGate {
 public:
  virtual ~IngestGate() = default;
  // Before anything is read from the stream.
  virtual grpc::Status AdmitStream(grpc::ServerContext* context) = 0;
  // After Hello; may rewrite the identity (the uid the process is recorded under).
  virtual grpc::Status AdmitProcess(grpc::ServerContext* context, v1::ProcessIdentity* identity) = 0;
};

class IngestService final : public v1::Ingest::Service {
 public:
  IngestService(BatchIngestor* ingestor, ConnectionRegistry* connections, IngestCounters* counters)
      : ingestor_(ingestor), connections_(connections), counters_(counters) {}
  // Without a gate every stream is admitted as sent.
  void set_gate(IngestGate* gate) { gate_ = gate; }

  grpc::Status Stream(grpc::ServerContext* context,
                      grpc::ServerReaderWriter<v1::ServerMessage, v1::ClientMessage>* stream)
      override;

 private:
  BatchIngestor* ingestor_;
  ConnectionRegistry* connections_;
  IngestCounters* counters_;
  IngestGate* gate_ = nullptr;
};

// absl::Status -> grpc::Status with the same code and message.
grpc::Status ToGrpc(const absl::Status& status);

}  // namespace gpuspy::collector
