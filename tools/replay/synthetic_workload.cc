#include "tools/replay/synthetic_workload.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "tools/replay/clock_skew.h"
#include "tools/replay/collective_model.h"
#include "tools/replay/shape_bodies.h"
#include "tools/replay/step_bodies.h"
#include "tools/replay/timeline.h"

namespace gpuspy::synthetic {
namespace {

// Single-process scenarios' straggler: host and GPU both this much slower.
constexpr double kSlowRankScale = 1.3;
// kStragglerCompute: the slow rank's GPU work per step (uneven sharding, a throttled GPU).
constexpr double kStragglerComputeScale = 1.35;
// kStragglerInput: the slow rank's data loader takes this much longer at every step start,
// ~40% of the ~60 ms step.
constexpr int64_t kStragglerInputExtraNs = 24 * kMs;
// Where the ranks' kernels of one collective end relative to each other: the last chunk lands
// on every GPU within about a microsecond.
constexpr int64_t kCollectiveEndSpreadNs = 1 * kUs;
// Small collectives' fixed cost varies between 25 and ~38 us (ring handshakes, proxy thread).
constexpr int64_t kCollectiveLatencySpreadNs = 13 * kUs;
constexpr uint32_t kOptimizerKernels = 8;
// kMemoryLeak: what each step keeps (a tensor appended to a list: the caching allocator has no
// free block for it, so a new segment per step), and where the Python code does it.
constexpr uint64_t kLeakBytesPerStep = 64ull << 20;
constexpr char kLeakCallSite[] = "train.py:87 history.append(outputs)";
// kCopyHeavy: the batch copied each step from pageable memory (~11 ms at 6 GB/s against ~6 ms
// of compute); pinned (~3 ms) it hides behind the compute, as the fixed twin shows.
constexpr uint64_t kCopyHeavyBytes = 64ull << 20;
// NCCL's low-latency protocol carries small messages, SIMPLE the large ones.
constexpr uint64_t kLowLatencyProtocolMaxBytes = 256ull << 10;

// A rank's pid; its host work runs on its main thread, whose OS thread id is the pid (as a Python
// training script's does), so the timeline calls that lane "main thread".
uint32_t PidOf(int rank) { return 40000 + rank; }

v1::ProcessIdentity Identity(const SyntheticOptions& o, int rank) {
  v1::ProcessIdentity id;
  id.set_process_key(absl::StrCat("replay-host:", 40000 + rank, ":", o.seed, ":", o.job_id));
  id.set_job_id(o.job_id);
  id.set_host(absl::StrCat("replay-host-", rank / 8));
  id.set_pid(PidOf(rank));
  id.set_rank(rank);
  id.set_local_rank(rank % 8);
  id.set_world_size(o.ranks);
  id.add_command_line("python");
  id.add_command_line("train.py");
  id.add_command_line(absl::StrCat("--scenario=", ScenarioName(o.scenario)));
  id.set_source("replay");
  id.set_start_time_unix_ns(o.start_ns);
  auto* dev = id.add_devices();
  dev->set_id(0);
  dev->set_name("NVIDIA H100 80GB HBM3");
  dev->set_sm_count(132);
  dev->set_global_memory_bytes(80ull << 30);
  dev->set_compute_capability_major(9);
  return id;
}

// One rank while the job is simulated.
struct RankSim {
  RankSim(SyntheticRank* out, const SyntheticOptions& o, int rank, double host_scale,
          double gpu_scale)
      : out(out), t(&out->strings, o.seed * 1000003 + rank, PidOf(rank), host_scale, gpu_scale) {}
  SyntheticRank* out;
  Timeline t;
  int64_t step_start = 0;
  std::vector<uint64_t> weights;
  std::vector<uint64_t> churn_blocks;
  ShapeState shape;
  uint64_t collective_sequence = 0;
};

std::pair<double, double> HostAndGpuScale(const SyntheticOptions& o, int rank) {
  if (rank != EffectiveSlowRank(o)) return {1.0, 1.0};
  if (o.fixed && o.scenario == Scenario::kStragglerCompute) return {1.0, 1.0};
  switch (o.scenario) {
    case Scenario::kStragglerCompute: return {1.0, kStragglerComputeScale};
    case Scenario::kStragglerInput: return {1.0, 1.0};
    default: return {kSlowRankScale, kSlowRankScale};
  }
}

// Input, start-up allocations, warm-up work and the input copy: everything before the model.
void StepPrologue(const SyntheticOptions& o, int step, bool slow, RankSim& r) {
  Timeline& t = r.t;
  const bool warmup = step < o.warmup_steps;
  // Input: the next batch from the data loader (no CUDA work on the host meanwhile).
  t.HostWork(o.scenario == Scenario::kInputStall && !o.fixed ? 45 * kMs : 300 * kUs);
  if (slow && o.scenario == Scenario::kStragglerInput && !o.fixed) t.HostWork(kStragglerInputExtraNs);
  if (step == 0) {
    for (int i = 0; i < 4; ++i) r.weights.push_back(t.Malloc(256ull << 20));
    t.Free(t.Malloc(32ull << 20));  // autotuning scratch, given back at once
    t.Pool(PoolOpKind::kCreated, 2ull << 30, 1ull << 30);
    // One CUDA graph replay at start-up (e.g. a compiled warm-up region), so traces carry
    // whole-graph records too; steady steps stay graph-free so verdicts stay per-kernel.
    t.GraphLaunch(1, 500 * kUs);
  }
  if (warmup) {
    // Lazy module loading, cuDNN autotuning, torch.compile: slow host and extra kernels.
    t.HostWork(40 * kMs);
    for (int i = 0; i < 20; ++i) t.Launch(kAutotune, 400 * kUs);
  }
  if (o.scenario == Scenario::kCopyHeavy && o.fixed) {
    // Fixed: pinned, non_blocking, on a side stream: the next batch is prefetched while this one
    // computes, and this step's compute waits only for its own batch (copied during the step
    // before), so a step takes the longer of the copy and the compute.
    t.WaitStream(kComputeStream, kCopyStream);
    t.Copy(CopyKind::kHtoD, kCopyHeavyBytes, /*pageable=*/false, /*async=*/true, 0, kCopyStream);
  } else if (o.scenario == Scenario::kCopyHeavy) {
    t.Copy(CopyKind::kHtoD, kCopyHeavyBytes, /*pageable=*/true, /*async=*/false);
  } else {
    t.Copy(CopyKind::kHtoD, 8ull << 20, /*pageable=*/false, /*async=*/true);
  }
  t.Memset(1 << 20);
  if (o.scenario == Scenario::kAllocChurn && !o.fixed) {
    // torch.cuda.empty_cache() each step: the allocator gives memory back and asks again.
    for (int i = 0; i < 12; ++i) r.churn_blocks.push_back(t.Malloc(64ull << 20));
  }
}

// The optimizer (after the last all-reduce, as DDP orders it), the churned memory given back,
// loss.item(), the step's markers.
void StepEpilogue(const SyntheticOptions& o, int step, bool communicated, RankSim& r) {
  Timeline& t = r.t;
  if (communicated) t.WaitStream(kComputeStream, kNcclStream);
  for (uint32_t i = 0; i < kOptimizerKernels; ++i) {
    t.Launch(kOptimizer, 40 * kUs);
    t.HostWork(10 * kUs);
  }
  if (o.scenario == Scenario::kAllocChurn) {
    for (uint64_t b : r.churn_blocks) t.Free(b);
    r.churn_blocks.clear();
    t.Pool(PoolOpKind::kTrimmed, 2ull << 30, 1ull << 30);
  }
  if (o.scenario == Scenario::kMemoryLeak && !o.fixed) {
    t.Malloc(kLeakBytesPerStep, t.strings()->Intern(kLeakCallSite));
  }
  if (IsWhatIfShape(o.scenario)) ShapeStepEnd(o.scenario, o.fixed, t, r.shape);
  if (!IsWhatIfShape(o.scenario) || ShapeReadsLossEveryStep(o.scenario)) t.Item();  // loss.item()
  t.Mark(absl::StrCat("step ", step, " done"));
  if (step % 4 == 0) t.Overhead(20 * kUs);
  if (o.nvtx_steps) t.Range(absl::StrCat("ProfilerStep#", step), r.step_start, t.host(), 0);
}

bool EmitCollectiveArgs(const SyntheticOptions& o) {
  return o.emit_collective_args.value_or(IsMultiRank(o.scenario));
}

// One all-reduce of `bytes` on every rank: each launches it when it gets there, every kernel
// ends when the last rank has arrived and the data has moved.
void AllReduce(const SyntheticOptions& o, uint64_t bytes, std::mt19937_64& job_rng,
               std::vector<RankSim>& ranks) {
  const int n = static_cast<int>(ranks.size());
  std::vector<PendingCollective> pending;
  std::vector<int64_t> arrivals;
  const bool args = EmitCollectiveArgs(o);
  for (RankSim& r : ranks) {
    CollectiveEvent c;
    if (args) {
      StringTable& s = r.out->strings;
      c.op = s.Intern("allreduce");
      c.dtype = s.Intern("Float");
      c.group = s.Intern("0");
      c.in_bytes = c.out_bytes = bytes;
      c.group_size = static_cast<uint32_t>(n);
      c.sequence = static_cast<int64_t>(r.collective_sequence);
    }
    ++r.collective_sequence;
    const char* kernel = bytes <= kLowLatencyProtocolMaxBytes ? kNcclAllReduceLL
                                                              : kNcclAllReduceSimple;
    pending.push_back(r.t.LaunchCollective(kernel, kNcclStream, args ? &c : nullptr));
    arrivals.push_back(pending.back().arrival_ns);
  }
  std::uniform_int_distribution<int64_t> latency(0, kCollectiveLatencySpreadNs);
  const int64_t transfer = AllReduceTransferNs(bytes, n, BusModel{}, latency(job_rng));
  const int64_t end = CollectiveEndNs(arrivals, transfer);
  std::uniform_int_distribution<int64_t> spread(0, kCollectiveEndSpreadNs);
  for (size_t i = 0; i < ranks.size(); ++i) {
    ranks[i].t.EndCollective(pending[i], end + spread(job_rng));
  }
}

}  // namespace

bool ParseScenario(const std::string& name, Scenario* out) {
  std::vector<Scenario> all = AllScenarios();
  for (Scenario s : MultiRankScenarios()) all.push_back(s);
  for (Scenario s : WhatIfShapeScenarios()) all.push_back(s);
  for (Scenario s : all) {
    if (ScenarioName(s) == name) {
      *out = s;
      return true;
    }
  }
  return false;
}

std::vector<Scenario> AllScenarios() {
  return {Scenario::kHealthy,    Scenario::kSyncStall, Scenario::kLaunchStorm,
          Scenario::kCopyHeavy,  Scenario::kInputStall, Scenario::kFp32Gemm,
          Scenario::kAllocChurn, Scenario::kUnfusedMlp, Scenario::kEagerAttention,
          Scenario::kMemoryLeak, Scenario::kHostBound, Scenario::kCompiledMlp,
          Scenario::kSdpaAttention};
}

std::vector<Scenario> MultiRankScenarios() {
  return {Scenario::kStragglerCompute, Scenario::kStragglerInput, Scenario::kExposedComm,
          Scenario::kCommStorm};
}

std::vector<Scenario> WhatIfShapeScenarios() {
  return {Scenario::kEmptyCache,   Scenario::kEmptyCacheGc,  Scenario::kItemMetrics,
          Scenario::kItemLongMetrics, Scenario::kClipPerParam, Scenario::kClipPerParamPython};
}

bool HasFixedTwin(Scenario s) {
  switch (s) {
    case Scenario::kHealthy:
    case Scenario::kCompiledMlp:
    case Scenario::kSdpaAttention:
    case Scenario::kMemoryLeak:
    case Scenario::kExposedComm:
    case Scenario::kCommStorm:
      return false;
    default:
      return true;
  }
}

bool IsMultiRank(Scenario s) {
  const std::vector<Scenario> multi = MultiRankScenarios();
  return std::find(multi.begin(), multi.end(), s) != multi.end();
}

std::string ScenarioName(Scenario s) {
  switch (s) {
    case Scenario::kHealthy: return "healthy";
    case Scenario::kSyncStall: return "sync_stall";
    case Scenario::kLaunchStorm: return "launch_storm";
    case Scenario::kCopyHeavy: return "copy_heavy";
    case Scenario::kInputStall: return "input_stall";
    case Scenario::kFp32Gemm: return "fp32_gemm";
    case Scenario::kAllocChurn: return "alloc_churn";
    case Scenario::kUnfusedMlp: return "unfused_mlp";
    case Scenario::kEagerAttention: return "eager_attention";
    case Scenario::kCompiledMlp: return "compiled_mlp";
    case Scenario::kSdpaAttention: return "sdpa_attention";
    case Scenario::kMemoryLeak: return "memory_leak";
    case Scenario::kHostBound: return "host_bound";
    case Scenario::kStragglerCompute: return "straggler_compute";
    case Scenario::kStragglerInput: return "straggler_input";
    case Scenario::kExposedComm: return "exposed_comm";
    case Scenario::kCommStorm: return "comm_storm";
    case Scenario::kEmptyCache: return "empty_cache";
    case Scenario::kEmptyCacheGc: return "empty_cache_gc";
    case Scenario::kItemMetrics: return "item_metrics";
    case Scenario::kItemLongMetrics: return "item_long_metrics";
    case Scenario::kClipPerParam: return "clip_per_param";
    case Scenario::kClipPerParamPython: return "clip_per_param_python";
  }
  return "?";
}

std::string ExpectedPrimary(Scenario s) {
  switch (s) {
    case Scenario::kHealthy: return "gpu_bound";
    case Scenario::kSyncStall: return "sync_stall";
    case Scenario::kLaunchStorm: return "launch_storm";
    case Scenario::kCopyHeavy: return "copy_dominated";
    case Scenario::kInputStall: return "input_stall";
    case Scenario::kFp32Gemm: return "fp32_gemm";
    case Scenario::kAllocChurn: return "alloc_churn";
    case Scenario::kUnfusedMlp: return "unfused_elementwise";
    case Scenario::kEagerAttention: return "unfused_attention";
    // The fused controls: the same models with the fix applied are GPU-bound, nothing to fuse.
    case Scenario::kCompiledMlp: return "gpu_bound";
    case Scenario::kSdpaAttention: return "gpu_bound";
    case Scenario::kMemoryLeak: return "memory_growth";
    case Scenario::kHostBound: return "host_bound";
    // The verdict of the ranks that wait (ExpectedPrimary(options, rank) names the straggler).
    case Scenario::kStragglerCompute: return "straggler_wait";
    case Scenario::kStragglerInput: return "straggler_wait";
    case Scenario::kExposedComm: return "exposed_comm";
    case Scenario::kCommStorm: return "comm_storm";
    case Scenario::kEmptyCache:
    case Scenario::kEmptyCacheGc: return "alloc_churn";
    case Scenario::kItemMetrics: return "sync_stall";
    // The metrics outlast the GPU work: the host's own work sets the pace, the wait is short.
    case Scenario::kItemLongMetrics: return "host_bound";
    case Scenario::kClipPerParam:
    case Scenario::kClipPerParamPython: return "launch_storm";
  }
  return "?";
}

size_t SyntheticRank::event_count() const {
  size_t n = 0;
  for (const auto& s : steps) n += s.size();
  return n;
}

int EffectiveSlowRank(const SyntheticOptions& o) {
  switch (o.scenario) {
    case Scenario::kExposedComm:
    case Scenario::kCommStorm:
      return -1;  // about communication among equals
    case Scenario::kStragglerCompute:
    case Scenario::kStragglerInput:
      if (o.ranks < 2) return -1;
      if (o.slow_rank >= 0) return o.slow_rank;
      return o.ranks >= 3 ? 2 : 1;
    default:
      return o.slow_rank;
  }
}

std::string ExpectedPrimary(const SyntheticOptions& o, int rank) {
  const bool straggler_scenario =
      o.scenario == Scenario::kStragglerCompute || o.scenario == Scenario::kStragglerInput;
  if (straggler_scenario && rank == EffectiveSlowRank(o)) return "straggler";
  return ExpectedPrimary(o.scenario);
}

int64_t ClockOffsetNs(const SyntheticOptions& o, int rank) {
  return DeterministicClockOffsetNs(o.seed, rank, o.clock_skew_ns);
}

std::vector<SyntheticRank> GenerateRanks(const SyntheticOptions& o, int first, int count) {
  const int n = std::max(1, o.ranks);
  first = std::clamp(first, 0, n);
  count = std::clamp(count, 0, n - first);
  const auto kept = [&](int r) { return r >= first && r < first + count; };
  std::vector<SyntheticRank> out(n);
  std::vector<RankSim> sims;
  sims.reserve(n);
  for (int r = 0; r < n; ++r) {
    out[r].identity = Identity(o, r);
    const auto [host_scale, gpu_scale] = HostAndGpuScale(o, r);
    sims.emplace_back(&out[r], o, r, host_scale, gpu_scale);
  }
  const std::vector<uint64_t> all_reduces = StepAllReduces(o.scenario, n, o.seed);
  const int segments = ComputeSegments(o.scenario, n, o.seed);
  std::mt19937_64 job_rng(o.seed ^ 0x5eed'c011'ec71'7e5ull);
  for (int step = 0; step < o.steps; ++step) {
    const StepContext context{o.scenario, step < o.warmup_steps, n, o.fixed};
    for (int r = 0; r < n; ++r) {
      RankSim& sim = sims[r];
      // A rank's host clock starts at start_ns and runs on: each step starts where its previous
      // one ended (ranks agree closely, as the collectives synchronize them).
      sim.t.Begin(&out[r].steps.emplace_back(), o.start_ns);
      sim.step_start = sim.t.host();
      StepPrologue(o, step, r == EffectiveSlowRank(o), sim);
    }
    for (int segment = 0; segment < segments; ++segment) {
      for (RankSim& sim : sims) {
        if (IsWhatIfShape(o.scenario)) {
          ShapeBody(o.scenario, o.fixed, context.warmup ? kWarmupSlowdown : 1.0, sim.t, sim.shape);
        } else {
          ComputeSegment(context, segment, sim.t);
        }
      }
      if (segment < static_cast<int>(all_reduces.size())) {
        AllReduce(o, all_reduces[segment], job_rng, sims);
      }
    }
    for (int r = 0; r < n; ++r) {
      StepEpilogue(o, step, !all_reduces.empty(), sims[r]);
      out[r].expected_primary.push_back(context.warmup ? "warmup" : ExpectedPrimary(o, r));
      // A rank nobody asked for only had to arrive at the collectives: keep memory to the
      // requested ranks (a replay of 8 ranks of a 1024-rank job).
      if (!kept(r)) out[r].steps.back().clear();
    }
  }
  std::vector<SyntheticRank> result;
  for (int r = first; r < first + count; ++r) {
    const int64_t offset = ClockOffsetNs(o, r);
    for (EventColumns& step : out[r].steps) ShiftTimestamps(&step, offset);
    result.push_back(std::move(out[r]));
  }
  return result;
}

std::vector<SyntheticRank> GenerateJob(const SyntheticOptions& o) {
  return GenerateRanks(o, 0, std::max(1, o.ranks));
}

SyntheticRank GenerateRank(const SyntheticOptions& o, int rank) {
  std::vector<SyntheticRank> one = GenerateRanks(o, rank, 1);
  return std::move(one.at(0));
}

}  // namespace gpuspy::synthetic
