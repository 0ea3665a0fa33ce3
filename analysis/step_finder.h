// The one rule that finds a process's steps. gpuspyd's ingest (as each batch arrives), a job's new
// step pattern (its stored batches read again), the query layer and `gpuspy analyze` all apply
// it, so a step has the same number and bounds wherever it is shown:
//   1. NVTX ranges matching the step pattern (step_segmenter.h), found batch by batch; a step
//      number seen again replaces the earlier one (the store's upsert by number);
//   2. without any, steps from the kernel launch sequence's period (period_detector.h);
//   3. without a period, fixed time windows (`StepPolicy::window_ns`), which are not steps.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/batch_source.h"
#include "analysis/period_detector.h"
#include "analysis/step_segmenter.h"

namespace gpuspy::analysis {

// How a process's steps are found.
struct StepPolicy {
  // NVTX step ranges: the job's step pattern (only read where the source has no step index).
  std::shared_ptr<const StepSegmenter> segmenter = std::make_shared<const StepSegmenter>();
  // The fallback's window length.
  int64_t window_ns = kDefaultWindowNs;

  static StepPolicy ForPattern(const std::string& pattern) {
    return {std::make_shared<const StepSegmenter>(pattern), kDefaultWindowNs};
  }
};

// Rule 1 on one batch: the NVTX steps it holds (none when it holds no NVTX range).
std::vector<StepWindow> NvtxStepsOfBatch(const StepSegmenter& segmenter, const EventColumns& events,
                                         const StringTable& strings);

// Rule 1 over batches added in stored order.
class NvtxStepIndex {
 public:
  explicit NvtxStepIndex(const StepSegmenter& segmenter) : segmenter_(segmenter) {}
  void Add(const EventColumns& events, const StringTable& strings);
  // In step number order.
  std::vector<StepWindow> Steps() const;
  // Forgets the steps added so far (a second pass over later batches).
  void Clear() { by_number_.clear(); }

 private:
  const StepSegmenter& segmenter_;
  std::map<int64_t, StepWindow> by_number_;
};

// The process's steps by rules 1-3, in step number order. NVTX steps come from the source's index
// when it keeps one; detected steps from what it remembered, else they are detected (reading
// every batch once) and handed to it to remember.
absl::StatusOr<std::vector<StepWindow>> FindSteps(BatchSource& source, const StepPolicy& policy);

}  // namespace gpuspy::analysis
