// The job-level pass over every rank's steps: matches collectives across ranks step by step,
// splits each rank's communication into waiting for the last rank and moving data, estimates
// clock offsets between ranks, fills each step's CommSummary and runs the communication
// detectors (straggler_wait, straggler, exposed_comm, comm_storm). Definitions and thresholds:
// docs/detectors.md, "Cross-rank analysis".
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/step_series.h"

namespace gpuspy::analysis {

struct RankSeries {
  int32_t rank = -1;         // the process's rank; -1 when unknown (then numbered by position)
  uint32_t world_size = 0;   // 0 when unknown
  std::vector<StepAnalysis>* steps = nullptr;  // one process's steps, any order
  int64_t unix_offset_ns = 0;  // the process's CUPTI-to-unix clock offset (pairs non-NVTX steps)
};

// A collective is waited on beyond the best time of the same collective (same op, group and
// bytes; or same kernel and index in the step) when it takes this factor longer and at least
// kMinExcessNs more — counted only when not every rank of its group was captured (otherwise the
// cross-rank arrivals say who was late).
inline constexpr double kExcessFactor = 1.5;
inline constexpr int64_t kMinExcessNs = 100'000;
// How many collectives a CommSummary lists (most waited first).
inline constexpr int kListedCollectives = 5;
// waited_for_rank when the late rank was not captured.
inline constexpr int32_t kUncapturedPeer = -2;

// Works through the job one step number at a time: memory beyond the inputs is one step's
// matches plus a small table of best transfer times per collective signature.
void AnalyzeRanks(const std::vector<RankSeries>& ranks);

}  // namespace gpuspy::analysis
