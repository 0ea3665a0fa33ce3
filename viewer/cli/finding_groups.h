// Runs of consecutive steps of one rank with the same findings, told once: "rank 0 steps 2–7
// (6 steps): sync_stall, 18.4 ms/step lost (median) at train.py:57 loss_item" instead of the
// same block six times (what nsys/torch.profiler users expect from a summary).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::cli {

struct FindingRun {
  std::string rank;              // the rank's label
  int64_t first_step = 0;
  int64_t last_step = 0;
  size_t steps = 0;
  std::vector<std::string> detectors;  // the steps' findings, in order (all steps alike)
  int64_t median_lost_ns = 0;          // of the first finding
  std::string call_site;               // the first finding's top call site, when it names one
  std::string noun = "step";           // "window" for time windows (analysis/step_source.h)
};

// `ordered`: reports sorted by rank, then step. A run is at least two consecutive reports of the
// same rank whose findings name the same detectors in the same order (and at least one).
std::vector<FindingRun> FindingRuns(const std::vector<const v1::StepReport*>& ordered,
                                    const std::function<std::string(uint64_t)>& rank_of);

// "rank 0 steps 2-7 (6 steps): sync_stall, 18.40 ms/step lost (median) at train.py:57 f"
std::string Describe(const FindingRun& run);

}  // namespace gpuspy::cli
