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

#include "collector/analysis/step_series.h"
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

class AnalysisCache {
 public:
  // The analyses of `process` when they were made from its batches as they are now, for
  // `step_count` steps. Otherwise nullopt, and `*previous` receives the entry kept for it, if
  // any: its steps that end before the changed data can be reused.
  std::optional<std::vector<analysis::StepAnalysis>> Find(const ProcessRecord& process,
                                                          size_t step_count,
                                                          CachedAnalyses* previous);
  // Stores `entry` for `process_id` (its size estimated here) and drops least recently used
  // processes (never that one) until the cache is within its budget.
  void Put(uint64_t process_id, CachedAnalyses entry);

  // Steps detected for `process`, while its batches are as they were when they were detected.
  std::optional<std::vector<StepRecord>> FindDetectedSteps(const ProcessRecord& process) const;
  void PutDetectedSteps(const ProcessRecord& process, std::vector<StepRecord> steps);

  // 0 = unbounded. Set before serving.
  void set_budget(uint64_t bytes) { budget_ = bytes; }
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
  uint64_t budget_ = 0;
  uint64_t bytes_ = 0;  // mu_
  uint64_t tick_ = 0;   // mu_
  std::atomic<uint64_t> evictions_{0};
};

}  // namespace gpuspy::collector
