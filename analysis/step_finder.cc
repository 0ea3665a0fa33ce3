#include "analysis/step_finder.h"

#include <algorithm>
#include <utility>

namespace gpuspy::analysis {
namespace {

void SortByNumber(std::vector<StepWindow>* steps) {
  std::sort(steps->begin(), steps->end(),
            [](const StepWindow& x, const StepWindow& y) { return x.number < y.number; });
}

}  // namespace

std::vector<StepWindow> NvtxStepsOfBatch(const StepSegmenter& segmenter, const EventColumns& events,
                                         const StringTable& strings) {
  if (events.nvtx_ranges.empty()) return {};
  return segmenter.FindSteps(events, strings);
}

void NvtxStepIndex::Add(const EventColumns& events, const StringTable& strings) {
  for (StepWindow& w : NvtxStepsOfBatch(segmenter_, events, strings)) {
    by_number_[w.number] = std::move(w);
  }
}

std::vector<StepWindow> NvtxStepIndex::Steps() const {
  std::vector<StepWindow> steps;
  steps.reserve(by_number_.size());
  for (const auto& [n, w] : by_number_) steps.push_back(w);
  return steps;
}

absl::StatusOr<std::vector<StepWindow>> FindSteps(BatchSource& source, const StepPolicy& policy) {
  absl::StatusOr<std::optional<std::vector<StepWindow>>> indexed = source.IndexedNvtxSteps();
  if (!indexed.ok()) return indexed.status();
  std::vector<StepWindow> steps;
  if (indexed->has_value()) {
    steps = **std::move(indexed);
  } else {
    NvtxStepIndex index(*policy.segmenter);
    absl::Status read = source.ForEachBatch(
        [&](const EventColumns& events, const StringTable& strings) { index.Add(events, strings); });
    if (!read.ok()) return read;
    steps = index.Steps();
  }
  if (!steps.empty()) {
    SortByNumber(&steps);
    return steps;
  }
  if (std::optional<std::vector<StepWindow>> kept = source.RememberedDetection()) {
    return *std::move(kept);
  }
  // Batch by batch: a process without NVTX steps may have tens of millions of events.
  StepDetectionInput input;
  absl::Status read =
      source.ForEachBatch([&](const EventColumns& events, const StringTable&) { input.Add(events); });
  if (!read.ok()) return read;
  steps = input.Periodic();
  if (steps.empty()) steps = input.Fixed(policy.window_ns);
  SortByNumber(&steps);
  source.RememberDetection(steps);
  return steps;
}

}  // namespace gpuspy::analysis
