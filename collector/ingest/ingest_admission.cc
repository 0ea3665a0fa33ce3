#include "collector/ingest/ingest_admission.h"

#include <algorithm>

#include "codec/batch_decoder.h"

namespace gpuspy::collector {
namespace {

// Decoded columns take about this much per event (the widest event structs, vector slack).
constexpr uint64_t kDecodedBytesPerEvent = 128;
// The parsed message, its bytes as received (kept for the store), and compression's buffers:
// each about the wire size.
constexpr uint64_t kWireCopies = 3;

}  // namespace

uint64_t BatchCost(const v1::EventBatch& batch) {
  return kWireCopies * batch.ByteSizeLong() + kDecodedBytesPerEvent * CountEvents(batch);
}

IngestAdmission::IngestAdmission(AdmissionOptions options, IngestCounters* counters)
    : options_(options), counters_(counters) {
  if (counters_ != nullptr) {
    counters_->ingest_memory_budget_bytes.store(options_.memory_bytes, std::memory_order_relaxed);
    counters_->max_ingest_streams.store(options_.max_streams, std::memory_order_relaxed);
  }
}

IngestAdmission::StreamSlot::~StreamSlot() {
  if (owner_ != nullptr) owner_->CloseStream();
}

IngestAdmission::Reservation::~Reservation() {
  if (owner_ != nullptr) owner_->Release(bytes_);
}

std::optional<IngestAdmission::StreamSlot> IngestAdmission::OpenStream() {
  {
    std::lock_guard lock(mu_);
    if (streams_ < options_.max_streams) {
      ++streams_;
      return StreamSlot(this);
    }
  }
  if (counters_ != nullptr) counters_->Add(counters_->ingest_streams_refused);
  return std::nullopt;
}

void IngestAdmission::CloseStream() {
  std::lock_guard lock(mu_);
  --streams_;
}

bool IngestAdmission::Fits(uint64_t bytes) const {
  return in_flight_ == 0 || in_flight_ + bytes <= options_.memory_bytes;
}

std::optional<IngestAdmission::Reservation> IngestAdmission::Reserve(uint64_t bytes, bool* waited) {
  *waited = false;
  std::unique_lock lock(mu_);
  if (!Fits(bytes)) {
    *waited = true;
    if (!released_.wait_for(lock, absl::ToChronoNanoseconds(options_.max_wait),
                            [&] { return Fits(bytes); })) {
      lock.unlock();
      if (counters_ != nullptr) counters_->Add(counters_->ingest_batches_refused);
      return std::nullopt;
    }
  }
  in_flight_ += bytes;
  if (counters_ != nullptr) {
    counters_->ingest_bytes_in_flight.store(in_flight_, std::memory_order_relaxed);
    // Only written under mu_, so a plain max is race-free.
    if (in_flight_ > counters_->ingest_peak_bytes_in_flight.load(std::memory_order_relaxed)) {
      counters_->ingest_peak_bytes_in_flight.store(in_flight_, std::memory_order_relaxed);
    }
    if (*waited) counters_->Add(counters_->ingest_batches_deferred);
  }
  return Reservation(this, bytes);
}

bool IngestAdmission::AwaitRoom() {
  std::unique_lock lock(mu_);
  return released_.wait_for(lock, absl::ToChronoNanoseconds(options_.max_wait),
                            [&] { return in_flight_ < options_.memory_bytes; });
}

void IngestAdmission::Release(uint64_t bytes) {
  {
    std::lock_guard lock(mu_);
    in_flight_ -= std::min(bytes, in_flight_);
    if (counters_ != nullptr) {
      counters_->ingest_bytes_in_flight.store(in_flight_, std::memory_order_relaxed);
    }
  }
  released_.notify_all();
}

uint64_t IngestAdmission::bytes_in_flight() const {
  std::lock_guard lock(mu_);
  return in_flight_;
}

size_t IngestAdmission::streams_open() const {
  std::lock_guard lock(mu_);
  return streams_;
}

}  // namespace gpuspy::collector
