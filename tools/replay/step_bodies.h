// The GPU work of one training step on one rank, by scenario (forward, backward), cut at the
// step's gradient all-reduces: compute segment i runs, then the job all-reduces
// StepAllReduces()[i] (DDP launches a bucket's all-reduce as soon as backward has produced it).
// The input, optimizer and loss.item() around it are the same for every scenario
// (synthetic_workload.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "tools/replay/synthetic_workload.h"
#include "tools/replay/timeline.h"

namespace gpuspy::synthetic {

// Warm-up steps' GPU work runs this much slower (autotuning, lazy module loading).
inline constexpr double kWarmupSlowdown = 2.5;

struct StepContext {
  Scenario scenario = Scenario::kHealthy;
  bool warmup = false;
  int ranks = 1;
  bool fixed = false;  // SyntheticOptions::fixed: the scenario's cause removed
};

// Bytes per rank of each all-reduce of a step, in launch order; the same on every rank and every
// step. Empty: the step does not communicate (one process of a single-process scenario).
std::vector<uint64_t> StepAllReduces(Scenario scenario, int ranks, uint64_t seed);

// Compute segments of a step: one per all-reduce, and at least one.
int ComputeSegments(Scenario scenario, int ranks, uint64_t seed);

// Launches compute segment `segment` of the step on `t`.
void ComputeSegment(const StepContext& c, int segment, Timeline& t);

}  // namespace gpuspy::synthetic
