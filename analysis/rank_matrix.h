// The ranks x steps view of a job: per step number, each rank's verdict, wait and exposed
// communication, who was the straggler; per rank, its steady-state medians. Built from the step
// reports after the cross-rank pass (cross_rank_analysis.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

struct ProcessRank {
  uint64_t process_id = 0;
  int32_t rank = -1;  // -1: numbered by position among the job's processes
  std::string host;
};

// Fills summary->steps and summary->ranks. `steps` are every step report of the job (any order).
void AddRankMatrix(const std::vector<v1::StepReport>& steps, const std::vector<ProcessRank>& processes,
                   v1::JobSummary* summary);

}  // namespace gpuspy::analysis
