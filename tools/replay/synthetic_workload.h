// Synthetic but realistic PyTorch-like training steps, for demos, tests and benchmarks without
// a GPU. A small host/GPU timeline simulation per rank (timeline.h): the host launches work (API
// calls with CUPTI-like costs), each stream runs it in order once launched, syncs block the host
// until the GPU drains. The ranks of a job are simulated together, so their collectives obey the
// physics of a synchronous collective (collective_model.h): every rank's NCCL kernel starts when
// that rank arrives and ends when the last one has arrived and the data has moved.
// Each scenario reproduces one pathology the detectors must name.
#pragma once

#include <cstdint>
#include <optional>
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
  kUnfusedMlp,   // GPU busy, but each GEMM is followed by 4 memory-bound kernels (>50% of GPU time)
  kEagerAttention,  // attention as bmm → masked_fill → softmax → dropout → bmm in every layer
  kCompiledMlp,  // kUnfusedMlp after torch.compile: each GEMM's tail is one Triton kernel (GPU-bound)
  kSdpaAttention,  // kEagerAttention with scaled_dot_product_attention: one flash kernel a layer
  kMemoryLeak,   // the healthy body, plus a 64 MiB cudaMalloc per step that is never freed
  kHostBound,    // the healthy body with 60 ms of Python mid-step (metrics on CPU): the GPU starves
  // Multi-rank (DDP-like) jobs; with one rank they run alone with no one to wait for.
  kStragglerCompute,  // the slow rank computes ~35% more per step; the others wait in all-reduces
  kStragglerInput,    // the slow rank's data loader takes ~40% of a step longer (GPU idle)
  kExposedComm,       // one big all-reduce after backward, nothing to overlap: ~30% of the step
  kCommStorm,         // 400 tiny (16-64 KiB) latency-bound all-reduces per step during backward
  // What-if shapes (shape_bodies.h): a fix that removes host work as well as the GPU idle after
  // it, each with a near miss where the host work stays. Single-process; not in AllScenarios().
  kEmptyCache,         // torch.cuda.empty_cache() every step: sync, frees, mallocs again
  kEmptyCacheGc,       // near miss: the same after gc.collect(), which the fix keeps
  kItemMetrics,        // loss.item() mid-step, CPU metrics on the value, then backward
  kItemLongMetrics,    // near miss: the metrics outlast the GPU work queued before the .item()
  kClipPerParam,       // gradient clipping written per parameter: a norm and a mul_ each
  kClipPerParamPython, // near miss: each parameter's loop body also runs Python the fix keeps
};

// "healthy", "sync_stall", ...; false for unknown names (single- and multi-rank scenarios).
bool ParseScenario(const std::string& name, Scenario* out);
std::string ScenarioName(Scenario s);
// The single-process scenarios: each one's pathology shows on one process alone.
std::vector<Scenario> AllScenarios();
// The scenarios about communication between ranks (meant for 2 or more ranks).
std::vector<Scenario> MultiRankScenarios();
bool IsMultiRank(Scenario s);
// The what-if shapes: each a fix whose gain includes host work (and its near miss).
std::vector<Scenario> WhatIfShapeScenarios();

struct SyntheticOptions {
  Scenario scenario = Scenario::kHealthy;
  int steps = 10;
  int ranks = 1;
  int warmup_steps = 2;       // first steps run slower (autotuning, allocator growth)
  // The straggler. Single-process scenarios: this rank's host and GPU are 30% slower (-1: none).
  // kStraggler*: -1 picks rank 2 when there are 3 or more ranks, else rank 1. kExposedComm and
  // kCommStorm have none whatever this says (EffectiveSlowRank).
  int slow_rank = -1;
  uint64_t seed = 1;
  std::string job_id = "synthetic";
  int64_t start_ns = 1'700'000'000'000'000'000;  // CUPTI-like absolute timestamps
  bool nvtx_steps = true;     // false: no ProfilerStep ranges (a job run without a profiler)
  // Each rank's clock is off the job's reference by a deterministic offset within
  // +-clock_skew_ns (ClockOffsetNs): what unsynchronized host clocks do to CUPTI timestamps.
  int64_t clock_skew_ns = 0;
  // Attach a CollectiveEvent (op, bytes, group, sequence) to every NCCL kernel, as a Kineto trace
  // does; live CUPTI capture has only the kernel name. Unset: on for the multi-rank scenarios,
  // off for the others.
  std::optional<bool> emit_collective_args;
  // The scenario's fixed twin: the same workload and seed with its cause removed, the fix its
  // finding's hint names applied (HasFixedTwin). The difference between the two runs' step
  // times is what the fix measurably saves: the ground truth for the what-if replay's gains.
  bool fixed = false;
};

// Whether `fixed` changes the scenario (healthy and the fused controls have nothing to fix; a
// leak costs no time per step).
bool HasFixedTwin(Scenario s);

// The detector a steady step of the scenario must be blamed on, on this rank. kStraggler*:
// "straggler" on the slow rank, "straggler_wait" on the others.
std::string ExpectedPrimary(const SyntheticOptions& options, int rank);
// Single-process scenarios (as ExpectedPrimary(options, rank) for a job of one rank).
std::string ExpectedPrimary(Scenario s);
// The straggler rank, -1 for none.
int EffectiveSlowRank(const SyntheticOptions& options);
// `rank`'s clock minus the job's reference clock; 0 when options.clock_skew_ns is 0.
int64_t ClockOffsetNs(const SyntheticOptions& options, int rank);

struct SyntheticRank {
  v1::ProcessIdentity identity;
  StringTable strings;
  // One entry per step, in order: each step's events (every step also has its ProfilerStep#N
  // NVTX range). Kept per step so producers can batch naturally and tests can check steps.
  std::vector<EventColumns> steps;
  std::vector<std::string> expected_primary;  // per step: "warmup" or ExpectedPrimary(o, rank)

  size_t event_count() const;
};

// Every rank of the job (options.ranks of them), simulated together so their collectives match.
std::vector<SyntheticRank> GenerateJob(const SyntheticOptions& options);
// Ranks [first, first + count) of GenerateJob(options), clamped to the job. Every rank is still
// simulated (each collective depends on all of them), but only these keep their events.
std::vector<SyntheticRank> GenerateRanks(const SyntheticOptions& options, int first, int count);
// One rank of GenerateJob(options) (simulates the whole job: call GenerateJob for several ranks).
SyntheticRank GenerateRank(const SyntheticOptions& options, int rank);

}  // namespace gpuspy::synthetic
