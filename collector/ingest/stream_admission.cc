#include "collector/ingest/stream_admission.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {

StreamAdmission::StreamAdmission(IngestAdmission* admission, OverloadLedger* ledger,
                                 std::string peer, uint64_t process_id)
    : admission_(admission), ledger_(ledger), peer_(std::move(peer)), process_id_(process_id) {}

void StreamAdmission::Note(OverloadReason reason) {
  if (ledger_ != nullptr) ledger_->Note(process_id_, reason, absl::ToUnixNanos(absl::Now()));
}

std::optional<StreamAdmission::Refusal> StreamAdmission::OpenStream() {
  if (admission_ == nullptr) return std::nullopt;
  slot_ = admission_->OpenStream();
  if (slot_.has_value()) return std::nullopt;
  Note(OverloadReason::kStreamRefused);
  spdlog::debug("ingest {}: process {} refused: {} streams open", peer_, process_id_,
                admission_->options().max_streams);
  return Refusal{admission_->options().stream_retry_after,
                 absl::StrCat("gpuspyd is overloaded: ", admission_->options().max_streams,
                              " ingest streams are open (--max-ingest-streams)")};
}

void StreamAdmission::AwaitRoom() {
  if (admission_ != nullptr) (void)admission_->AwaitRoom();
}

std::optional<StreamAdmission::Refusal> StreamAdmission::ReserveBatch(
    const v1::EventBatch& batch) {
  batch_.reset();
  if (admission_ == nullptr) return std::nullopt;
  bool waited = false;
  batch_ = admission_->Reserve(BatchCost(batch), &waited);
  if (waited) {
    Note(batch_.has_value() ? OverloadReason::kBatchDeferred : OverloadReason::kBatchRefused);
  }
  if (batch_.has_value()) return std::nullopt;
  spdlog::debug("ingest {}: process {} batch {} refused: memory budget full", peer_, process_id_,
                batch.sequence());
  return Refusal{admission_->options().memory_retry_after,
                 absl::StrCat("gpuspyd is overloaded: its ingest memory budget of ",
                              admission_->options().memory_bytes >> 20,
                              " MiB is in use (--ingest-memory-mb)")};
}

}  // namespace gpuspy::collector
