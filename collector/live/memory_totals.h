// Device memory totals of each process, kept by ingest as batches arrive (it decodes every batch
// anyway), so that the report of a live job's recent steps gets the levels before its stretch
// without reading the process's history again. Re-decoding what arrived since the last query,
// on every query and every warmer round, made ingest 4x slower under unpaced producers (issue
// 34 item 9: 127-151 s instead of 34 s, bench/results/report-latency-unpaced-2026-11-28.md).
//
// Per process: the memory records of its last kKeptRecords memory events (a few bytes each,
// ordered by time) on top of a base that folds everything older. Before(p, t) folds the records
// before t onto the base. Thread-safe: ingest streams write, queries read.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "analysis/memory_usage.h"
#include "model/events.h"

namespace gpuspy::collector {

class MemoryTotals {
 public:
  // Memory events kept one by one per process; older ones are folded into its base (then a
  // stretch starting before the fold is answered by reading the store, as before). 64 Ki records
  // of 32 bytes: 2 MiB per process at most, and months of a training job's steady state.
  static constexpr size_t kKeptRecords = 64 * 1024;

  // The memory events of one stored batch of `process_id`. `from_start`: the batch is the
  // process's first stored one (a process first seen mid-stream, e.g. after gpuspyd restarted
  // on a store holding its earlier batches, is never complete: Before answers nullopt).
  void Add(uint64_t process_id, const EventColumns& events, bool from_start);

  // What every memory event of the process before `to_ns` adds up to, in the terms MemoryLevels
  // reads of a stretch before a step (segment ops and net bytes; the allocator samples' count
  // and the totals after the last one, summed over devices). nullopt when the process is not
  // complete here or `to_ns` falls in the folded part.
  std::optional<analysis::WindowMemory> Before(uint64_t process_id, int64_t to_ns) const;

  void Forget(uint64_t process_id);
  // Forgets every process for which `keep` answers false (the store no longer lists it: its job
  // was deleted, retention evicted all its batches, an unfinished import was replaced). Without
  // it a long-lived gpuspyd kept up to 2 MiB for every process it ever saw.
  void ForgetUnless(const std::function<bool(uint64_t process_id)>& keep);
  size_t process_count() const;

 private:
  struct Record {
    int64_t timestamp_ns = 0;
    int64_t segment_delta_bytes = 0;  // device segment alloc (+) or free (-)
    bool segment_op = false;
    bool sample = false;  // an allocator usage sample of `device`
    uint32_t device = 0;
    int64_t reserved_bytes = 0, allocated_bytes = 0;
  };
  struct Totals {
    uint64_t segment_ops = 0;
    int64_t segment_net_bytes = 0;
    uint64_t samples = 0;
    std::map<uint32_t, std::pair<int64_t, int64_t>> device_latest;  // reserved, allocated
    std::map<uint32_t, int64_t> device_latest_ns;
    void Fold(const Record& r);
  };
  struct Process {
    bool complete = false;
    Totals base;
    int64_t folded_up_to_ns = std::numeric_limits<int64_t>::min();  // base holds every record before this
    std::deque<Record> records;           // after it, by time
    absl::flat_hash_map<uint64_t, uint64_t> live_segments;  // address -> bytes (frees' sizes)
  };

  mutable std::mutex mu_;
  absl::flat_hash_map<uint64_t, Process> processes_;
};

}  // namespace gpuspy::collector
