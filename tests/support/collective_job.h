// Hand-constructed multi-rank steps whose every wait is known: a test fixture for the cross-rank
// analysis. Each rank's step: an optional host gap (input), compute kernels back to back on the
// compute stream, and the step's collectives on the NCCL stream. Collective i is launched after
// its share of the compute (DDP buckets; the last one after backward), starts on rank r at
// max(its launch, the previous collective's end), and ends on every rank at the last start plus
// its transfer time: the physics of a synchronous collective. Timestamps of rank r are shifted
// by its clock offset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::testing {

struct RankPlan {
  // Compute kernels of CollectiveJobPlan::kernel_ns each: more compute is more kernels (a larger
  // shard); a slower GPU is the same kernels, longer (kernel_slowdown).
  int64_t compute_ns = 40'000'000;
  // In these steps the rank computes slow_compute_ns instead (an intermittent straggler).
  std::vector<int> slow_steps;
  int64_t slow_compute_ns = 0;
  int64_t input_gap_ns = 0;       // GPU idle at the step start, host busy elsewhere (data loader)
  double kernel_slowdown = 1.0;   // the same kernels take this factor longer (a slower GPU)
  int64_t clock_offset_ns = 0;
};

struct CollectiveJobPlan {
  std::vector<RankPlan> ranks;
  int steps = 5;
  int collectives_per_step = 1;
  // Buckets launched as compute progresses (overlapped), or all after compute (exposed).
  bool overlapped = false;
  uint64_t bytes = 100ull << 20;   // per collective
  int64_t transfer_ns = 5'000'000;  // per collective, once every rank has arrived
  int64_t post_ns = 200'000;       // optimizer kernels after the last collective
  bool with_args = true;            // CollectiveEvents (Kineto) or kernel names only (live)
  int64_t kernel_ns = 2'000'000;
  // Each rank reaches each collective up to this much later than planned (a deterministic
  // pseudo-random share): the arrival noise of a real job, no straggler.
  int64_t arrival_jitter_ns = 0;
  // What the collectives are: Kineto's collective name and the NCCL kernel that runs them
  // (an all_to_all runs as NCCL's grouped send/recv kernel).
  std::string op = "allreduce";
  std::string kernel = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
};

struct CollectiveJobRank {
  int rank = 0;
  StringTable strings;
  EventColumns events;
  std::vector<int64_t> wait_ns;  // per step: the wait the construction put in this rank's step
};

// The whole job (every rank in the plan), steps as NVTX ProfilerStep#N ranges.
std::vector<CollectiveJobRank> BuildCollectiveJob(const CollectiveJobPlan& plan);

}  // namespace gpuspy::testing
