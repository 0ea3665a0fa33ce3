// gRPC glue for gpuspy.v1.Ingest: reads the stream, hands each message to BatchIngestor, maps
// statuses. No ingest logic lives here.
#pragma once

#include "collector/ingest/batch_ingestor.h"
#include "collector/live/connection_registry.h"
#include "collector/ingest/ingest_admission.h"
#include "collector/live/overload_ledger.h"
#include "collector/ingest/stream_admission.h"
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
  IngestService(BatchIngestor* ingestor, ConnectionRegistry* connections, IngestCounters* counters);
  // Without a gate every stream is admitted as sent.
  void set_gate(IngestGate* gate) { gate_ = gate; }
  // Without admission every stream and batch is taken (no bound on either). Refusals are noted
  // per process in `ledger` (optional).
  void set_admission(IngestAdmission* admission, OverloadLedger* ledger) {
    admission_ = admission;
    ledger_ = ledger;
  }

  // Ingest/Stream, reading raw bytes and parsing them here: with the generated handler a message
  // that does not parse ends Read() like the producer's half-close, so garbage was answered OK
  // with nothing logged.
  grpc::Status RawStream(grpc::ServerContext* context,
                         grpc::ServerReaderWriter<v1::ServerMessage, grpc::ByteBuffer>* stream);

 private:
  BatchIngestor* ingestor_;
  ConnectionRegistry* connections_;
  IngestCounters* counters_;
  IngestGate* gate_ = nullptr;
  IngestAdmission* admission_ = nullptr;
  OverloadLedger* ledger_ = nullptr;
};

// Trailing metadata of a RESOURCE_EXHAUSTED refusal: milliseconds the producer should wait before
// it tries again (it adds jitter). client/transport/ingest_client.h reads the same key.
inline constexpr char kRetryAfterMetadataKey[] = "gpuspy-retry-after-ms";

}  // namespace gpuspy::collector
