// A run of steps with the same findings (analysis/finding_runs.h) as the line `gpuspy report`
// prints.
#pragma once

#include <string>

#include "analysis/finding_runs.h"

namespace gpuspy::cli {

// "rank 0 steps 2-7 (6 steps): sync_stall, 18.40 ms/step lost (median) at train.py:57 f"
std::string Describe(const analysis::FindingRun& run, const std::string& rank);

}  // namespace gpuspy::cli
