// The cross-rank picture of a multi-rank job in text, from GetJobSummary's ranks x steps matrix:
// a per-step line (slowest rank, straggler, each rank's wait in collectives, exposed
// communication) and a ranks x steps matrix of verdicts as short codes.
#pragma once

#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::cli {

// Which of the summary's steps to show: one step (step >= 0), the last `last` (last > 0), or all.
struct StepPick {
  int64_t step = -1;
  uint32_t last = 0;
  bool all = false;
};

// A verdict (the primary bottleneck's detector) as two letters for the matrix; "--" for none,
// the detector's name for one too rare to have a code.
std::string VerdictCode(v1::Detector detector);

// The summary's steps chosen by `pick`, in step order.
std::vector<const v1::JobStep*> PickSteps(const v1::JobSummary& summary, const StepPick& pick);

// The ranks seen in `steps`, ascending.
std::set<int32_t> RanksOf(const std::vector<const v1::JobStep*>& steps);

// One row per step: slowest rank, straggler, each rank's wait in collectives (ms; a column per
// rank up to kMaxRankColumns ranks, else min/median/max), the largest exposed communication.
// `rank` >= 0 keeps only that rank's wait. Prints nothing when no step has two ranks.
void PrintRankSteps(const std::vector<const v1::JobStep*>& steps, int32_t rank, std::ostream& out);

// Ranks x steps: each cell the rank's verdict code in that step, '*' where the others waited for
// it; then the count of such steps per rank and a legend of the codes shown. `rank` >= 0 keeps
// only that rank's row.
void PrintRankMatrix(const std::vector<const v1::JobStep*>& steps, int32_t rank, std::ostream& out);

}  // namespace gpuspy::cli
