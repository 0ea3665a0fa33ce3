// Synthetic but realistic PyTorch-like training steps, for demos, tests and benchmarks without
// a GPU. A small host/GPU timeline simulation: the host launches work (API calls with CUPTI-like
// costs), each stream runs it in order once launched, syncs block the host until the GPU drains.
// Each scenario reproduces one pathology the detectors must name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuspy/v1/identity.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::synthetic {

enum class Scenario {
  kHealthy,      // big tensor-core GEMMs back to back: GPU-bound
  kSyncStall,    // .item() after every few ops: the pipeline drains each time
  kLaunchStorm,  // thousands of tiny elementwise kernels
  kCopyHeavy,    // large pageable, synchronous H2D copies each step
  kInputStall,   // the host spends most of the step in the data loader
  kFp32Gemm,     // FP32 SIMT sgemm kernels dominate
  kAllocChurn,   // cudaMalloc/cudaFree every step (empty_cache)
};

// "healthy", "sync_stall", ...; false for unknown names.
bool ParseScenario(const std::string& name, Scenario* out);
std::string ScenarioName(Scenario s);
// The detector a steady step of the scenario must be blamed on.
std::string ExpectedPrimary(Scenario s);
std::vector<Scenario> AllScenarios();

struct SyntheticOptions {
  Scenario scenario = Scenario::kHealthy;
  int steps = 10;
  int ranks = 1;
  int warmup_steps = 2;       // first steps run slower (autotuning, allocator growth)
  int slow_rank = -1;         // this rank's host is 30% slower (a straggler)
  uint64_t seed = 1;
  std::string job_id = "synthetic";
  int64_t start_ns = 1'700'000'000'000'000'000;  // CUPTI-like absolute timestamps
  bool nvtx_steps = true;     // false: no ProfilerStep ranges (a job run without a profiler)
};

struct SyntheticRank {
  v1::ProcessIdentity identity;
  StringTable strings;
  // One entry per step, in order: each step's events (every step also has its ProfilerStep#N
  // NVTX range). Kept per step so producers can batch naturally and tests can check steps.
  std::vector<EventColumns> steps;
  std::vector<std::string> expected_primary;  // per step: "warmup" or ExpectedPrimary(scenario)

  size_t event_count() const;
};

SyntheticRank GenerateRank(const SyntheticOptions& options, int rank);

}  // namespace gpuspy::synthetic
