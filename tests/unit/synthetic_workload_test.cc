// The synthetic workload must look like a real CUPTI capture of a PyTorch job, or the detectors
// and the e2e tests built on it prove nothing: deterministic per seed, every event kind present,
// every kernel launched by a cudaLaunchKernel with its correlation id, step ranges around their
// launches, loss.item() draining the GPU, warm-up steps slower, scenarios shaped as named.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tools/replay/synthetic_workload.h"

namespace gpuspy {
namespace {

using synthetic::Scenario;
using synthetic::SyntheticOptions;
using synthetic::SyntheticRank;

SyntheticRank Generate(Scenario scenario, int steps = 6, int ranks = 1, uint64_t seed = 5,
                       int rank = 0) {
  SyntheticOptions o;
  o.scenario = scenario;
  o.steps = steps;
  o.ranks = ranks;
  o.seed = seed;
  return synthetic::GenerateRank(o, rank);
}

std::string Strings(const StringTable& t) {
  std::string out;
  t.ForEach([&](StringRef ref, std::string_view value) {
    out += std::to_string(ref) + "=" + std::string(value) + "\n";
  });
  return out;
}

int64_t Wall(const EventColumns& step) {
  const auto [lo, hi] = step.TimeRange();
  return hi - lo;
}

class EveryScenario : public ::testing::TestWithParam<Scenario> {};

TEST_P(EveryScenario, SameSeedSameEvents) {
  const SyntheticRank a = Generate(GetParam(), 4, 2, 9, 1);
  const SyntheticRank b = Generate(GetParam(), 4, 2, 9, 1);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(Strings(a.strings), Strings(b.strings));
  EXPECT_EQ(a.identity.SerializeAsString(), b.identity.SerializeAsString());
  EXPECT_EQ(a.expected_primary, b.expected_primary);
}

TEST_P(EveryScenario, DifferentSeedsJitterTheTimings) {
  EXPECT_NE(Generate(GetParam(), 3, 1, 1).steps, Generate(GetParam(), 3, 1, 2).steps);
}

TEST_P(EveryScenario, EveryEventKindAppears) {
  const SyntheticRank r = Generate(GetParam(), 6, 2);
  EventColumns all;
  for (const auto& s : r.steps) all.Append(s);
  EXPECT_FALSE(all.kernels.empty());
  EXPECT_FALSE(all.memcpys.empty());
  EXPECT_FALSE(all.memsets.empty());
  EXPECT_FALSE(all.syncs.empty());
  EXPECT_FALSE(all.memory.empty());
  EXPECT_FALSE(all.apis.empty());
  EXPECT_FALSE(all.nvtx_ranges.empty());
  EXPECT_FALSE(all.nvtx_marks.empty());
  EXPECT_FALSE(all.overheads.empty());
  EXPECT_FALSE(all.graph_launches.empty());
  EXPECT_FALSE(all.external_correlations.empty());
  EXPECT_FALSE(all.memory_pools.empty());
  std::set<MemoryOpKind> ops;
  for (const auto& m : all.memory) ops.insert(m.op);
  EXPECT_THAT(ops, ::testing::ElementsAre(MemoryOpKind::kAlloc, MemoryOpKind::kFree));
}

TEST_P(EveryScenario, EveryKernelHasItsLaunchCallOnTheMainThread) {
  const int rank = 1;
  const SyntheticRank r = Generate(GetParam(), 4, 2, 5, rank);
  const StringRef launch = r.strings.Find("cudaLaunchKernel");
  const StringRef graph_launch = r.strings.Find("cudaGraphLaunch");
  ASSERT_NE(launch, 0u);
  std::set<uint32_t> threads;
  std::set<uint64_t> correlations;
  for (const EventColumns& step : r.steps) {
    std::map<uint64_t, const ApiEvent*> api_by_corr;
    for (const ApiEvent& a : step.apis) {
      threads.insert(a.thread_id);
      EXPECT_TRUE(correlations.insert(a.correlation_id).second)
          << "correlation id " << a.correlation_id << " used twice";
      api_by_corr[a.correlation_id] = &a;
    }
    std::set<uint64_t> external;
    for (const auto& x : step.external_correlations) external.insert(x.correlation_id);
    for (const KernelEvent& k : step.kernels) {
      auto it = api_by_corr.find(k.correlation_id);
      ASSERT_NE(it, api_by_corr.end()) << r.strings.Get(k.name);
      const ApiEvent& a = *it->second;
      EXPECT_EQ(a.name, launch);
      EXPECT_EQ(a.domain, ApiDomain::kRuntime);
      // Launch cost and launch-to-start delay as CUPTI shows them on a real GPU.
      EXPECT_GE(a.end_ns - a.start_ns, 3'000);
      EXPECT_LE(a.end_ns - a.start_ns, 10'000);
      EXPECT_GE(k.start_ns, a.end_ns);
      EXPECT_GT(k.end_ns, k.start_ns);
      EXPECT_TRUE(external.contains(k.correlation_id)) << "no PyTorch op id for the launch";
    }
    for (const GraphLaunchEvent& g : step.graph_launches) {
      ASSERT_TRUE(api_by_corr.contains(g.correlation_id));
      EXPECT_EQ(api_by_corr[g.correlation_id]->name, graph_launch);
      EXPECT_GE(g.start_ns, api_by_corr[g.correlation_id]->end_ns);
    }
    for (const MemcpyEvent& m : step.memcpys) EXPECT_TRUE(api_by_corr.contains(m.correlation_id));
    for (const MemsetEvent& m : step.memsets) EXPECT_TRUE(api_by_corr.contains(m.correlation_id));
  }
  // The training loop is one Python thread.
  EXPECT_EQ(threads.size(), 1u);
}

TEST_P(EveryScenario, StepRangesContainTheirLaunchesAndFollowEachOther) {
  const SyntheticRank r = Generate(GetParam(), 5);
  int64_t previous_end = 0;
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const EventColumns& step = r.steps[i];
    // The step's range (depth 0); host_bound also ranges its mid-step Python (depth 1).
    ASSERT_EQ(step.nvtx_ranges.size(), GetParam() == Scenario::kHostBound ? 2u : 1u);
    const auto top = std::find_if(step.nvtx_ranges.begin(), step.nvtx_ranges.end(),
                                  [](const NvtxRangeEvent& n) { return n.depth == 0; });
    ASSERT_NE(top, step.nvtx_ranges.end());
    const NvtxRangeEvent& range = *top;
    EXPECT_EQ(r.strings.Get(range.message), "ProfilerStep#" + std::to_string(i));
    EXPECT_EQ(range.depth, 0u);
    EXPECT_GE(range.start_ns, previous_end);
    previous_end = range.end_ns;
    for (const ApiEvent& a : step.apis) {
      EXPECT_GE(a.start_ns, range.start_ns) << "step " << i;
      EXPECT_LE(a.end_ns, range.end_ns) << "step " << i;
    }
  }
}

TEST_P(EveryScenario, LossItemDrainsTheGpu) {
  const SyntheticRank r = Generate(GetParam(), 4);
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const EventColumns& step = r.steps[i];
    // The last copy of a step is loss.item(): 4 bytes into pageable host memory.
    ASSERT_FALSE(step.memcpys.empty());
    const MemcpyEvent& item = step.memcpys.back();
    EXPECT_EQ(item.copy_kind, CopyKind::kDtoH);
    EXPECT_EQ(item.bytes, 4u);
    EXPECT_EQ(item.dst_kind, MemoryKind::kPageable);
    ASSERT_FALSE(step.syncs.empty());
    const SyncEvent& sync = step.syncs.back();
    EXPECT_EQ(sync.sync_kind, SyncKind::kStream);
    EXPECT_GE(sync.start_ns, item.start_ns);
    for (const KernelEvent& k : step.kernels) {
      if (k.stream.stream_id == sync.stream.stream_id) {
        EXPECT_LE(k.end_ns, sync.end_ns);
      }
    }
  }
}

TEST_P(EveryScenario, WarmupStepsAreSlower) {
  const SyntheticRank r = Generate(GetParam(), 6);
  EXPECT_THAT(r.expected_primary,
              ::testing::ElementsAre("warmup", "warmup", ::testing::_, ::testing::_, ::testing::_,
                                     ::testing::_));
  std::vector<int64_t> steady;
  for (size_t i = 2; i < r.steps.size(); ++i) steady.push_back(Wall(r.steps[i]));
  const int64_t slowest_steady = *std::max_element(steady.begin(), steady.end());
  EXPECT_GT(Wall(r.steps[0]), slowest_steady);
  EXPECT_GT(Wall(r.steps[1]), slowest_steady);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, EveryScenario, ::testing::ValuesIn(synthetic::AllScenarios()),
                         [](const auto& info) { return synthetic::ScenarioName(info.param); });

size_t KernelsPerStep(const SyntheticRank& r, size_t step) { return r.steps[step].kernels.size(); }

TEST(SyntheticWorkload, HealthyStepsAreGpuBoundWithHundredsOfKernels) {
  const SyntheticRank r = Generate(Scenario::kHealthy);
  EXPECT_GE(KernelsPerStep(r, 3), 100u);
  EXPECT_LE(KernelsPerStep(r, 3), 300u);
  const EventColumns& step = r.steps[3];
  int64_t busy = 0;
  for (const KernelEvent& k : step.kernels) busy += k.end_ns - k.start_ns;
  EXPECT_GT(static_cast<double>(busy) / Wall(step), 0.8);
}

TEST(SyntheticWorkload, LaunchStormHasThousandsOfTinyKernels) {
  const SyntheticRank r = Generate(Scenario::kLaunchStorm);
  EXPECT_GE(KernelsPerStep(r, 3), 2000u);
  std::vector<int64_t> durations;
  for (const KernelEvent& k : r.steps[3].kernels) durations.push_back(k.end_ns - k.start_ns);
  std::nth_element(durations.begin(), durations.begin() + durations.size() / 2, durations.end());
  EXPECT_LT(durations[durations.size() / 2], 10'000);
}

TEST(SyntheticWorkload, CopyHeavyCopiesLargePageableInput) {
  const SyntheticRank r = Generate(Scenario::kCopyHeavy);
  const MemcpyEvent& input = r.steps[3].memcpys.front();
  EXPECT_EQ(input.copy_kind, CopyKind::kHtoD);
  EXPECT_EQ(input.src_kind, MemoryKind::kPageable);
  EXPECT_GE(input.bytes, 64u << 20);
  // Healthy input comes from pinned memory.
  EXPECT_EQ(Generate(Scenario::kHealthy).steps[3].memcpys.front().src_kind, MemoryKind::kPinned);
}

TEST(SyntheticWorkload, SyncStallBlocksTheHostOften) {
  const SyntheticRank stall = Generate(Scenario::kSyncStall);
  const SyntheticRank healthy = Generate(Scenario::kHealthy);
  EXPECT_GT(stall.steps[3].syncs.size(), 4 * healthy.steps[3].syncs.size());
}

TEST(SyntheticWorkload, MultiRankAllReduceRunsOnItsOwnStream) {
  const SyntheticRank r = Generate(Scenario::kHealthy, 3, 4, 5, 2);
  std::set<uint32_t> nccl_streams, other_streams;
  for (const KernelEvent& k : r.steps[2].kernels) {
    const bool nccl = r.strings.Get(k.name).starts_with("ncclDevKernel_AllReduce");
    (nccl ? nccl_streams : other_streams).insert(k.stream.stream_id);
  }
  ASSERT_EQ(nccl_streams.size(), 1u);
  EXPECT_FALSE(other_streams.contains(*nccl_streams.begin()));
  // A single process has nobody to reduce with.
  const SyntheticRank single = Generate(Scenario::kHealthy, 3);
  for (const KernelEvent& k : single.steps[2].kernels) {
    EXPECT_FALSE(single.strings.Get(k.name).starts_with("nccl"));
  }
}

TEST(SyntheticWorkload, KernelNamesAreRealTemplatedNames) {
  const SyntheticRank r = Generate(Scenario::kHealthy);
  std::set<std::string> names;
  for (const KernelEvent& k : r.steps[3].kernels) names.insert(std::string(r.strings.Get(k.name)));
  EXPECT_TRUE(std::any_of(names.begin(), names.end(), [](const std::string& n) {
    return n.starts_with("void at::native::vectorized_elementwise_kernel<4,");
  }));
  EXPECT_TRUE(std::any_of(names.begin(), names.end(),
                          [](const std::string& n) { return n.starts_with("sm90_xmma_gemm_"); }));
}

TEST(SyntheticWorkload, IdentityDescribesTheRankAndItsGpu) {
  SyntheticOptions o;
  o.job_id = "bert";
  o.ranks = 16;
  const SyntheticRank r = synthetic::GenerateRank(o, 9);
  EXPECT_EQ(r.identity.job_id(), "bert");
  EXPECT_EQ(r.identity.rank(), 9);
  EXPECT_EQ(r.identity.world_size(), 16);
  EXPECT_EQ(r.identity.source(), "replay");
  ASSERT_EQ(r.identity.devices_size(), 1);
  EXPECT_EQ(r.identity.devices(0).name(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.identity.devices(0).sm_count(), 132u);
  EXPECT_EQ(r.identity.devices(0).global_memory_bytes(), 80ull << 30);
  // Distinct processes per rank: the collector keys processes on this.
  EXPECT_NE(r.identity.process_key(), synthetic::GenerateRank(o, 8).identity.process_key());
}

TEST(SyntheticWorkload, WithoutNvtxThereAreNoStepRanges) {
  SyntheticOptions o;
  o.steps = 3;
  o.nvtx_steps = false;
  for (const EventColumns& step : synthetic::GenerateRank(o, 0).steps) {
    EXPECT_TRUE(step.nvtx_ranges.empty());
    EXPECT_FALSE(step.kernels.empty());
  }
}

TEST(SyntheticWorkload, ScenarioNamesRoundTrip) {
  for (Scenario s : synthetic::AllScenarios()) {
    Scenario parsed = Scenario::kHealthy;
    ASSERT_TRUE(synthetic::ParseScenario(synthetic::ScenarioName(s), &parsed));
    EXPECT_EQ(parsed, s);
  }
  Scenario unchanged = Scenario::kCopyHeavy;
  EXPECT_FALSE(synthetic::ParseScenario("gpu_on_fire", &unchanged));
  EXPECT_EQ(unchanged, Scenario::kCopyHeavy);
}

}  // namespace
}  // namespace gpuspy
