// Which steps of different ranks are the same step of the job. NVTX steps (ProfilerStep#N) carry
// the training loop's own number on every rank. Steps found without NVTX (period detection,
// windows) are numbered per process from where its capture began, so rank 1's step 3 need not be
// rank 0's: they are paired by time instead, on the wall clock (each process's
// CUPTI-to-unix offset), with the reference rank's step that overlaps them most.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "analysis/step_series.h"

namespace gpuspy::analysis {

struct RankSteps {
  std::vector<StepAnalysis>* steps = nullptr;
  int64_t unix_offset_ns = 0;  // unix_ns = step time + this
};

// A step pairs with the reference step it overlaps most when that overlap is at least this share
// of the shorter of the two.
inline constexpr double kMinStepOverlapShare = 0.5;

// Keys at or below this are steps paired with no reference step.
inline constexpr int64_t kUnpairedStepKeys = std::numeric_limits<int64_t>::min() / 4;

// keys[i][j]: the job step of ranks[i]'s j-th step. `reference` indexes the rank whose numbering
// the job uses. A step that pairs with none gets a key of its own (analysed without peers).
std::vector<std::vector<int64_t>> JobStepKeys(const std::vector<RankSteps>& ranks, size_t reference);

}  // namespace gpuspy::analysis
