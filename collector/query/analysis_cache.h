// What QueryEngine keeps between queries, per process: the per-step analyses of its last report
// (before cross-step analysis) and the steps detected from its kernel period (processes without
// NVTX steps). An entry stands for the process's stored batches as they were (max_sequence and
// batch_count); the analyses are held within an estimated memory budget, the processes queried
// least recently dropped first (their next query analyses them again). Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "analysis/step_series.h"
#include "collector/storage/store.h"

namespace gpuspy::collector {

struct CachedAnalyses {
  uint64_t max_sequence = 0;
  uint64_t batch_count = 0;
  size_t step_count = 0;
  std::vector<analysis::StepAnalysis> steps;
  uint64_t version = 0;  // DataVersions version the analyses reflect
  std::map<int64_t, std::string> window_notes;  // step number -> its own part of the note
  uint64_t bytes = 0;      // estimated memory held
  uint64_t last_used = 0;  // tick when last read or written
};

// The memory one step's analysis holds, estimated (its report by reflection, its kernel names
// and collectives).
uint64_t EstimatedBytes(const analysis::StepAnalysis& a);

class AnalysisCache {
 public:
  // The analyses of `process` when they were made from its batches as they are now, for
  // `step_count` steps. Otherwise nullopt, and `*previous` receives the entry kept for it, if
  // any: its steps that end before the changed data can be reused. `*copied_bytes` (optional)
  // receives the estimated size of what was copied out (the analyses, or `*previous`).
  std::optional<std::vector<analysis::StepAnalysis>> Find(const ProcessRecord& process,
                                                          size_t step_count,
                                                          CachedAnalyses* previous,
                                                          uint64_t* copied_bytes = nullptr);
  // Whether `process`'s entry was made from its batches as they are now (any step count).
  bool IsCurrent(const ProcessRecord& process) const;
  // Stores `entry` for `process_id` (its size estimated here) and drops least recently used
  // processes (never that one) until the cache is within its budget, less what queries in
  // progress hold (set_in_flight).
  void Put(uint64_t process_id, CachedAnalyses entry);
  // Drops least recently used processes until the cache holds at most `bytes` (AnalysisBudget
  // makes room for queries in progress).
  void EvictDownTo(uint64_t bytes);

  // Steps detected for `process`, while its batches are as they were when they were detected.
  std::optional<std::vector<StepRecord>> FindDetectedSteps(const ProcessRecord& process) const;
  void PutDetectedSteps(const ProcessRecord& process, std::vector<StepRecord> steps);
  // Drops everything kept for the process: its steps changed under a new step pattern, while its
  // batches (what an entry is checked against) did not.
  void Forget(uint64_t process_id);

  // 0 = unbounded. Set before serving.
  void set_budget(uint64_t bytes) { budget_ = bytes; }
  // What queries in progress hold of the same budget (analysis_budget.h). Set before serving.
  void set_in_flight(const std::atomic<uint64_t>* bytes) { in_flight_ = bytes; }
  uint64_t budget() const { return budget_; }
  uint64_t bytes() const;
  uint64_t evictions() const { return evictions_.load(); }

 private:
  struct DetectedSteps {
    uint64_t max_sequence = 0;
    uint64_t batch_count = 0;
    std::vector<StepRecord> steps;
  };

  mutable std::mutex mu_;
  std::map<uint64_t, CachedAnalyses> analyses_;
  std::map<uint64_t, DetectedSteps> detected_steps_;
  // Drops the least recently used entry other than `keep`'s; false when there is none.
  bool EvictOneLocked(uint64_t keep);

  uint64_t budget_ = 0;
  const std::atomic<uint64_t>* in_flight_ = nullptr;
  uint64_t bytes_ = 0;  // mu_
  uint64_t tick_ = 0;   // mu_
  std::atomic<uint64_t> evictions_{0};
};

}  // namespace gpuspy::collector
