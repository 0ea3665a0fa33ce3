// Cross-rank matching of one step's collectives, and each rank's wait in them.
//
// The k-th collective of a (process group, op) in a step on rank A is the k-th on every other
// rank. A synchronous collective completes on all ranks at nearly the same moment (it cannot end
// before the last rank has contributed), so matched *ends* estimate each rank's clock offset (the
// median of end_r - end_ref over the step's matches: robust to a few odd collectives; its error is
// NCCL's completion skew, microseconds within a node, tens across nodes). With clocks aligned,
// a rank's arrival is its kernel's start; the last arrival decides when data can move, and each
// rank's wait = last arrival - own arrival, capped by its kernel's duration. The rest of the
// kernel is transfer.
//
// Point-to-point transfers (send/recv: pipeline stages) are not matched: the k-th send of one
// rank pairs with some other rank's recv, which the kernel records do not name. Their waits come
// from the job-wide comparison with their best time (cross_rank_analysis.h).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/comm/step_collectives.h"

namespace gpuspy::analysis {

// Matched instances must end within this of their median end (clock offsets removed), or this
// share of the median duration if larger; the others are another group's collective.
inline constexpr int64_t kEndToleranceNs = 100'000;
inline constexpr double kEndToleranceShare = 0.05;

struct RankStepCollectives {
  int32_t rank = -1;
  const StepCollectives* collectives = nullptr;
};

struct CollectiveTiming {
  int64_t wait_ns = 0;
  int64_t transfer_ns = 0;
  int32_t last_rank = -1;      // who arrived last; -1 when this rank's instance matched no other
  uint32_t ranks_matched = 1;  // ranks whose instance was found, this one included
  // Beyond the collective's best instance, with no peer captured to say why (CommSummary).
  int64_t unattributed_ns = 0;
};

struct RankStepTiming {
  int64_t clock_offset_ns = 0;             // this rank's clock minus the reference rank's
  std::vector<CollectiveTiming> timings;   // parallel to collectives->ops
};

// One entry per input rank, in input order. The reference clock is the first rank's that has a
// collective in the step.
std::vector<RankStepTiming> MatchStepCollectives(const std::vector<RankStepCollectives>& ranks);

}  // namespace gpuspy::analysis
