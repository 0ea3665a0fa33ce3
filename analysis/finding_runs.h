// Runs of consecutive steps of one process with the same findings, told once: "rank 0 steps 2-7
// (6 steps): sync_stall, 18.4 ms/step lost (median) at train.py:57 loss_item" instead of the
// same block six times (what nsys/torch.profiler users expect from a summary). The CLI's report
// prints them; the figures are the analysis's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

struct FindingRun {
  uint64_t process_id = 0;
  int64_t first_step = 0;
  int64_t last_step = 0;
  size_t steps = 0;
  std::vector<std::string> detectors;  // the steps' findings, in order (all steps alike)
  int64_t median_lost_ns = 0;          // of the first finding
  std::string call_site;               // the first finding's first call site (Evidence.call_site)
  std::string noun = "step";           // "window" for time windows (step_source.h)
};

// `ordered`: reports sorted by process (rank), then step. A run is at least two consecutive
// reports of the same process whose findings name the same detectors in the same order (and at
// least one).
std::vector<FindingRun> FindingRuns(const std::vector<const v1::StepReport*>& ordered);

}  // namespace gpuspy::analysis
