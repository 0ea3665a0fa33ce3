// What the core's pipeline counts, for the exit line, `gpuspy jobs` loss columns and tests.
// Atomics: written on the gpuspy-send thread, read by the exit handler and tests.
#pragma once

#include <atomic>
#include <cstdint>

namespace gpuspy::inject {

struct PipelineStats {
  std::atomic<uint64_t> events{0};
  std::atomic<uint64_t> batches_delivered{0};
  std::atomic<uint64_t> batches_spilled{0};
  std::atomic<uint64_t> batches_replayed{0};
  std::atomic<uint64_t> batches_refused{0};   // collector said InvalidArgument
  std::atomic<uint64_t> spill_dropped_events{0};
  std::atomic<uint64_t> connect_failures{0};
  std::atomic<uint64_t> overload_refusals{0};  // collector said RESOURCE_EXHAUSTED (kept, retried)
  std::atomic<uint64_t> captures_started{0};
  std::atomic<uint64_t> events_outside_window{0};  // traced around a capture window, not sent
  // The parser's losses (ParserStats): GPU records CUPTI could not time, buffers whose walk
  // CUPTI abandoned. Published after each parse, for the exit line and tests.
  std::atomic<uint64_t> untimed_records{0};
  std::atomic<uint64_t> unreadable_buffers{0};
  // API events given a call site, and call-site marks whose API record never came.
  std::atomic<uint64_t> call_sites_joined{0};
  std::atomic<uint64_t> call_sites_expired{0};
};

}  // namespace gpuspy::inject
