// Which stretch of each process's timeline changed, and when: every stored batch bumps its
// process's version and notes the earliest time it touches. The query side caches per-step
// analyses with the version they were built at, and on the next query re-analyses only steps
// that end after the earliest time touched since, so a live job's reports cost O(new data),
// not O(history). Late batches (a spill replayed after a collector outage) touch old steps and
// re-analyse exactly those. Shared by ingest (writer) and query (reader); thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace gpuspy::collector {

class DataVersions {
 public:
  // Notes kept per process; a cache older than the oldest kept note is rebuilt in full.
  static constexpr size_t kNotesKept = 4096;
  static constexpr int64_t kNothing = std::numeric_limits<int64_t>::max();

  // A batch whose earliest event starts at `min_ns` was stored for `process_id`.
  void Note(uint64_t process_id, int64_t min_ns);
  uint64_t Version(uint64_t process_id) const;
  // The earliest time touched by batches stored after `version` (kNothing: none), or
  // std::numeric_limits<int64_t>::min() when the notes no longer reach back that far.
  int64_t EarliestSince(uint64_t process_id, uint64_t version) const;

 private:
  struct Process {
    uint64_t version = 0;
    std::deque<std::pair<uint64_t, int64_t>> notes;  // (version, min_ns), oldest first
  };
  mutable std::mutex mu_;
  absl::flat_hash_map<uint64_t, Process> processes_;
};

}  // namespace gpuspy::collector
