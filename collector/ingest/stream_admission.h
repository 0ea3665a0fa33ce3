// One ingest stream's part in overload control: it holds the stream's slot and each batch's share
// of the memory budget (IngestAdmission), notes every refusal and every wait against the process
// (OverloadLedger), and says what to answer a refused producer. IngestService::RawStream only
// asks it and maps a refusal to RESOURCE_EXHAUSTED with the retry hint (docs/overload.md).
// One per stream, used by the stream's handler thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "collector/ingest/ingest_admission.h"
#include "collector/live/overload_ledger.h"
#include "gpuspy/v1/wire.pb.h"

namespace gpuspy::collector {

class StreamAdmission {
 public:
  // Why a stream or a batch was turned away, and when the producer should try again.
  struct Refusal {
    absl::Duration retry_after;
    std::string message;
  };

  // Without `admission` every stream and batch is taken; without `ledger` nothing is noted.
  // `peer` and `process_id` name the stream in log lines and the ledger.
  StreamAdmission(IngestAdmission* admission, OverloadLedger* ledger, std::string peer,
                  uint64_t process_id);

  // Takes a stream slot, held until this object goes. Called after Hello, so a refusal is
  // counted against the process; a refused stream costs one small message and a process upsert.
  std::optional<Refusal> OpenStream();

  // Before reading the next message: waits (bounded) until the budget has room, so that HTTP/2
  // flow control keeps the producer's bytes on its side meanwhile. Reserve makes the decision.
  void AwaitRoom();

  // Reserves `batch`'s cost, held until ReleaseBatch (or the next Reserve). A refused batch is
  // not acknowledged: the producer keeps it and sends it again.
  std::optional<Refusal> ReserveBatch(const v1::EventBatch& batch);
  void ReleaseBatch() { batch_.reset(); }

 private:
  void Note(OverloadReason reason);

  IngestAdmission* admission_;
  OverloadLedger* ledger_;
  std::string peer_;
  uint64_t process_id_;
  std::optional<IngestAdmission::StreamSlot> slot_;
  std::optional<IngestAdmission::Reservation> batch_;
};

}  // namespace gpuspy::collector
