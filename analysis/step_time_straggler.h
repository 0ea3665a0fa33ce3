// The straggler rule for jobs without collectives (independent processes, gloo, or a capture
// without communication kernels): a rank whose step time is consistently the longest. With NCCL
// collectives step times are equal and cross_rank_analysis.h finds stragglers from the waits.
#pragma once

#include <vector>

#include "analysis/step_series.h"

namespace gpuspy::analysis {

// A rank slower than the median rank by this factor in at least half the steps.
inline constexpr double kStragglerFactor = 1.10;

// `ranks[i]` are the steps of rank i (same job). Adds a straggler finding to the steps of a rank
// that is consistently slowest, with how long the other ranks wait for it.
void AddStepTimeStragglers(const std::vector<std::vector<StepAnalysis>*>& ranks);

}  // namespace gpuspy::analysis
