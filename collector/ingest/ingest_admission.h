// How much ingest work the collector takes on at once: a bound on concurrent ingest streams and a
// memory budget for the batches being decoded and stored. Past either bound a producer is refused
// (RESOURCE_EXHAUSTED with a retry hint) instead of queued: the refused producer keeps its events
// in its spill and sends them again later, so overload costs the producers latency, not data, and
// the collector's memory stays bounded however many producers arrive. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/time/time.h"
#include "collector/live/ingest_counters.h"
#include "gpuspy/v1/wire.pb.h"

namespace gpuspy::collector {

inline constexpr size_t kDefaultMaxIngestStreams = 1024;
inline constexpr uint64_t kDefaultIngestMemoryBytes = 256ull << 20;

struct AdmissionOptions {
  size_t max_streams = kDefaultMaxIngestStreams;
  uint64_t memory_bytes = kDefaultIngestMemoryBytes;
  // A batch waits this long for room in the budget before it is refused: long enough to ride out
  // a burst, short enough that the producer's acknowledgement timeout (5 s) is never reached.
  absl::Duration max_wait = absl::Milliseconds(500);
  // Retry hints sent with a refusal. A stream slot frees when a producer ends or is refused, which
  // takes longer than memory draining (a batch is stored in milliseconds).
  absl::Duration stream_retry_after = absl::Seconds(2);
  absl::Duration memory_retry_after = absl::Seconds(1);
};

// What holding `batch` costs while it is decoded and stored: the message itself, its decoded
// columns, and its bytes as received (the stored payload). An estimate, used only against the
// budget.
uint64_t BatchCost(const v1::EventBatch& batch);

class IngestAdmission {
 public:
  // `counters` (optional) gets the refusal counts and the budget gauges.
  explicit IngestAdmission(AdmissionOptions options, IngestCounters* counters = nullptr);

  // Held by an admitted stream for its lifetime.
  class StreamSlot {
   public:
    StreamSlot(StreamSlot&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    StreamSlot& operator=(StreamSlot&& other) noexcept {
      std::swap(owner_, other.owner_);  // ours is released when `other` goes
      return *this;
    }
    ~StreamSlot();

   private:
    friend class IngestAdmission;
    explicit StreamSlot(IngestAdmission* owner) : owner_(owner) {}
    IngestAdmission* owner_;
  };
  // nullopt when max_streams streams are open (counted as a refusal).
  std::optional<StreamSlot> OpenStream();

  // Budget held by one batch while it is decoded and stored.
  class Reservation {
   public:
    Reservation(Reservation&& other) noexcept : owner_(other.owner_), bytes_(other.bytes_) {
      other.owner_ = nullptr;
    }
    Reservation& operator=(Reservation&& other) noexcept {
      std::swap(owner_, other.owner_);  // ours is released when `other` goes
      std::swap(bytes_, other.bytes_);
      return *this;
    }
    ~Reservation();
    uint64_t bytes() const { return bytes_; }

   private:
    friend class IngestAdmission;
    Reservation(IngestAdmission* owner, uint64_t bytes) : owner_(owner), bytes_(bytes) {}
    IngestAdmission* owner_;
    uint64_t bytes_;
  };
  // Reserves `bytes`, waiting up to max_wait for other batches to release theirs (`*waited` says
  // whether it had to). nullopt when no room came in time (counted as a refusal). A batch larger
  // than the whole budget is admitted while nothing else is in flight, so it cannot starve.
  std::optional<Reservation> Reserve(uint64_t bytes, bool* waited);

  // Waits up to max_wait for the budget to have room. A stream calls it before reading its next
  // message: while it waits, HTTP/2 flow control holds the producer's bytes, not our heap. False
  // when the budget is still full (the caller reads anyway; Reserve decides).
  bool AwaitRoom();

  const AdmissionOptions& options() const { return options_; }
  uint64_t bytes_in_flight() const;
  size_t streams_open() const;

 private:
  void Release(uint64_t bytes);
  void CloseStream();
  bool Fits(uint64_t bytes) const;  // mu_ held

  const AdmissionOptions options_;
  IngestCounters* counters_;
  mutable std::mutex mu_;
  std::condition_variable released_;
  size_t streams_ = 0;
  uint64_t in_flight_ = 0;
};

}  // namespace gpuspy::collector
