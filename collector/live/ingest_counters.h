// The collector's own counters: what arrived, what was stored, what was refused and why.
// Relaxed atomics: they are statistics, read by GetStats and /metrics, never used for control.
#pragma once

#include <atomic>
#include <cstdint>

#include "gpuspy/v1/services.pb.h"

namespace gpuspy::collector {

struct IngestCounters {
  std::atomic<uint64_t> batches_received{0};
  std::atomic<uint64_t> batches_stored{0};
  std::atomic<uint64_t> batches_duplicate{0};
  std::atomic<uint64_t> batches_rejected{0};
  std::atomic<uint64_t> batches_out_of_order{0};
  std::atomic<uint64_t> sequence_gaps{0};
  std::atomic<uint64_t> events_stored{0};
  std::atomic<uint64_t> bytes_stored{0};
  std::atomic<uint64_t> streams_open{0};
  std::atomic<uint64_t> streams_aborted{0};
  std::atomic<uint64_t> storage_errors{0};
  // Overload (IngestAdmission): refusals, and the memory budget's use.
  std::atomic<uint64_t> ingest_streams_refused{0};
  std::atomic<uint64_t> ingest_batches_refused{0};
  std::atomic<uint64_t> ingest_batches_deferred{0};
  std::atomic<uint64_t> ingest_bytes_in_flight{0};
  std::atomic<uint64_t> ingest_peak_bytes_in_flight{0};
  std::atomic<uint64_t> ingest_memory_budget_bytes{0};
  std::atomic<uint64_t> max_ingest_streams{0};

  void Add(std::atomic<uint64_t>& c, uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }
  void FillProto(v1::CollectorStats* out) const;
};

}  // namespace gpuspy::collector
