// The multi-rank synthetic jobs must obey the physics of synchronous collectives, or the
// cross-rank analysis tested on them proves nothing: every rank's kernel of a collective ends at
// the same time, early ranks' kernels are longer by exactly their wait, the straggler arrives
// last, and each scenario is shaped as named (a storm has hundreds of tiny collectives, exposed
// communication runs with no compute).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tools/replay/collective_model.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy {
namespace {

using synthetic::Scenario;
using synthetic::SyntheticOptions;
using synthetic::SyntheticRank;

constexpr int kRanks = 4;
constexpr int kSteps = 5;
constexpr int kFirstSteadyStep = 2;  // SyntheticOptions::warmup_steps
// Ranks' kernels of one collective end within this of each other (the generator spreads them
// by up to 1 us; a wrong model would be off by the waits, milliseconds).
constexpr int64_t kEndToleranceNs = 2'000;

SyntheticOptions Options(Scenario scenario, int ranks = kRanks) {
  SyntheticOptions o;
  o.scenario = scenario;
  o.ranks = ranks;
  o.steps = kSteps;
  o.seed = 17;
  return o;
}

bool IsNccl(const SyntheticRank& r, const KernelEvent& k) {
  return r.strings.Get(k.name).starts_with("ncclDevKernel_");
}

std::vector<KernelEvent> Nccl(const SyntheticRank& r, int step) {
  std::vector<KernelEvent> out;
  for (const KernelEvent& k : r.steps[step].kernels) {
    if (IsNccl(r, k)) out.push_back(k);
  }
  return out;
}

int64_t Duration(const KernelEvent& k) { return k.end_ns - k.start_ns; }

int64_t Wall(const EventColumns& step) {
  for (const NvtxRangeEvent& r : step.nvtx_ranges) return r.end_ns - r.start_ns;
  return 0;
}

// Time inside [a, b) covered by none of `busy` (sorted or not).
int64_t Uncovered(int64_t a, int64_t b, std::vector<std::pair<int64_t, int64_t>> busy) {
  std::sort(busy.begin(), busy.end());
  int64_t uncovered = 0, cursor = a;
  for (const auto& [s, e] : busy) {
    if (e <= cursor) continue;
    if (s >= b) break;
    if (s > cursor) uncovered += s - cursor;
    cursor = std::max(cursor, e);
  }
  if (cursor < b) uncovered += b - cursor;
  return uncovered;
}

// Communication time on `step` of `r` with no compute kernel, copy or memset running.
int64_t ExposedComm(const SyntheticRank& r, int step) {
  const EventColumns& ev = r.steps[step];
  std::vector<std::pair<int64_t, int64_t>> compute;
  for (const KernelEvent& k : ev.kernels) {
    if (!IsNccl(r, k)) compute.push_back({k.start_ns, k.end_ns});
  }
  for (const MemcpyEvent& m : ev.memcpys) compute.push_back({m.start_ns, m.end_ns});
  for (const MemsetEvent& m : ev.memsets) compute.push_back({m.start_ns, m.end_ns});
  int64_t exposed = 0;
  for (const KernelEvent& k : Nccl(r, step)) exposed += Uncovered(k.start_ns, k.end_ns, compute);
  return exposed;
}

class EveryMultiRankScenario : public ::testing::TestWithParam<Scenario> {};

TEST_P(EveryMultiRankScenario, MatchedCollectivesEndTogetherAndEarlyRanksWaitForTheLast) {
  const std::vector<SyntheticRank> job = synthetic::GenerateJob(Options(GetParam()));
  ASSERT_EQ(job.size(), size_t{kRanks});
  for (int step = 0; step < kSteps; ++step) {
    std::vector<std::vector<KernelEvent>> nccl;
    for (const SyntheticRank& r : job) nccl.push_back(Nccl(r, step));
    ASSERT_FALSE(nccl[0].empty());
    for (const auto& k : nccl) ASSERT_EQ(k.size(), nccl[0].size()) << "step " << step;
    for (size_t c = 0; c < nccl[0].size(); ++c) {
      int64_t first_end = INT64_MAX, last_end = INT64_MIN, last_start = INT64_MIN;
      int last_rank = 0;
      for (int r = 0; r < kRanks; ++r) {
        first_end = std::min(first_end, nccl[r][c].end_ns);
        last_end = std::max(last_end, nccl[r][c].end_ns);
        if (nccl[r][c].start_ns > last_start) last_start = nccl[r][c].start_ns, last_rank = r;
      }
      EXPECT_LE(last_end - first_end, kEndToleranceNs) << "step " << step << " collective " << c;
      // Each rank's kernel is longer than the last arrival's by its wait.
      for (int r = 0; r < kRanks; ++r) {
        const int64_t wait = last_start - nccl[r][c].start_ns;
        EXPECT_NEAR(Duration(nccl[r][c]) - Duration(nccl[last_rank][c]), wait, kEndToleranceNs);
      }
    }
  }
}

TEST_P(EveryMultiRankScenario, CollectiveArgsDescribeEachNcclKernelUnlessLiveCapture) {
  SyntheticOptions o = Options(GetParam());
  const std::vector<SyntheticRank> job = synthetic::GenerateJob(o);
  const SyntheticRank& r = job[1];
  const EventColumns& step = r.steps[kFirstSteadyStep];
  std::set<uint64_t> nccl_corr;
  for (const KernelEvent& k : Nccl(r, kFirstSteadyStep)) nccl_corr.insert(k.correlation_id);
  ASSERT_EQ(step.collectives.size(), nccl_corr.size());
  int64_t previous_sequence = -1;
  for (const CollectiveEvent& c : step.collectives) {
    EXPECT_TRUE(nccl_corr.contains(c.correlation_id));
    EXPECT_EQ(r.strings.Get(c.op), "allreduce");
    EXPECT_EQ(c.group_size, uint32_t{kRanks});
    EXPECT_GT(c.in_bytes, 0u);
    EXPECT_GT(c.sequence, previous_sequence);
    previous_sequence = c.sequence;
  }
  o.emit_collective_args = false;  // what live CUPTI capture has: kernel names only
  EXPECT_TRUE(synthetic::GenerateJob(o)[1].steps[kFirstSteadyStep].collectives.empty());
}

TEST_P(EveryMultiRankScenario, ClockSkewShiftsEachRankByItsOwnOffset) {
  SyntheticOptions o = Options(GetParam());
  const std::vector<SyntheticRank> plain = synthetic::GenerateJob(o);
  o.clock_skew_ns = 50'000'000;
  const std::vector<SyntheticRank> skewed = synthetic::GenerateJob(o);
  std::set<int64_t> offsets;
  for (int r = 0; r < kRanks; ++r) {
    const int64_t offset = synthetic::ClockOffsetNs(o, r);
    EXPECT_LE(std::abs(offset), o.clock_skew_ns);
    offsets.insert(offset);
    const KernelEvent& a = plain[r].steps[3].kernels.back();
    const KernelEvent& b = skewed[r].steps[3].kernels.back();
    EXPECT_EQ(b.start_ns - a.start_ns, offset);
    EXPECT_EQ(b.end_ns - a.end_ns, offset);
    EXPECT_EQ(skewed[r].steps[3].apis.front().start_ns - plain[r].steps[3].apis.front().start_ns,
              offset);
  }
  EXPECT_EQ(offsets.size(), size_t{kRanks}) << "every rank's clock is off differently";
}

INSTANTIATE_TEST_SUITE_P(Scenarios, EveryMultiRankScenario,
                         ::testing::ValuesIn(synthetic::MultiRankScenarios()),
                         [](const auto& info) { return synthetic::ScenarioName(info.param); });

// The waiting ranks' summed wait per steady step, and the straggler's.
struct Waits {
  std::vector<int64_t> others;  // one per steady step and waiting rank
  std::vector<int64_t> straggler;
  std::vector<int64_t> walls;   // the straggler's steady step walls
};

Waits WaitsOf(const std::vector<SyntheticRank>& job, int slow) {
  Waits w;
  for (int step = kFirstSteadyStep; step < kSteps; ++step) {
    std::vector<std::vector<KernelEvent>> nccl;
    for (const SyntheticRank& r : job) nccl.push_back(Nccl(r, step));
    for (int r = 0; r < static_cast<int>(job.size()); ++r) {
      int64_t wait = 0;
      for (size_t c = 0; c < nccl[r].size(); ++c) {
        int64_t last = INT64_MIN;
        for (const auto& k : nccl) last = std::max(last, k[c].start_ns);
        wait += last - nccl[r][c].start_ns;
      }
      (r == slow ? w.straggler : w.others).push_back(wait);
    }
    w.walls.push_back(Wall(job[slow].steps[step]));
  }
  return w;
}

TEST(MultiRankWorkload, ComputeStragglerMakesTheOthersWaitAboutItsExtraCompute) {
  const SyntheticOptions o = Options(Scenario::kStragglerCompute);
  ASSERT_EQ(synthetic::EffectiveSlowRank(o), 2);
  const std::vector<SyntheticRank> job = synthetic::GenerateJob(o);
  const Waits w = WaitsOf(job, 2);
  for (int64_t wait : w.straggler) EXPECT_EQ(wait, 0) << "the straggler arrives last";
  // It computes ~35% more (~20 ms of a ~75 ms step): the others wait at least that long in the
  // first bucket alone, and the buckets behind it queue on NCCL's stream.
  for (size_t i = 0; i < w.others.size(); ++i) {
    EXPECT_GT(w.others[i], 15'000'000) << i;
  }
  // The ranks finish their steps together: the collectives synchronize them.
  for (int step = kFirstSteadyStep; step < kSteps; ++step) {
    for (const SyntheticRank& r : job) {
      EXPECT_NEAR(Wall(r.steps[step]), Wall(job[2].steps[step]), 200'000) << step;
    }
  }
}

TEST(MultiRankWorkload, InputStragglerLeavesItsGpuIdleWhileTheOthersWait) {
  const SyntheticOptions o = Options(Scenario::kStragglerInput, 2);
  ASSERT_EQ(synthetic::EffectiveSlowRank(o), 1);  // with 2 ranks
  const std::vector<SyntheticRank> job = synthetic::GenerateJob(o);
  const Waits w = WaitsOf(job, 1);
  for (int64_t wait : w.straggler) EXPECT_EQ(wait, 0);
  // The first bucket alone waits the ~24 ms the slow loader took.
  for (int64_t wait : w.others) EXPECT_GT(wait, 20'000'000);
  // The slow rank's GPU sits idle at step start: its first kernel starts >20 ms into the step.
  const EventColumns& slow = job[1].steps[3];
  int64_t first_kernel = INT64_MAX;
  for (const KernelEvent& k : slow.kernels) first_kernel = std::min(first_kernel, k.start_ns);
  EXPECT_GT(first_kernel - slow.nvtx_ranges.front().start_ns, 20'000'000);
}

TEST(MultiRankWorkload, ExposedCommIsAboutAThirdOfTheStepWithNothingToHideIt) {
  const std::vector<SyntheticRank> job = synthetic::GenerateJob(Options(Scenario::kExposedComm));
  const int64_t transfer =
      synthetic::AllReduceTransferNs(400ull << 20, kRanks, synthetic::BusModel{});
  for (const SyntheticRank& r : job) {
    for (int step = kFirstSteadyStep; step < kSteps; ++step) {
      ASSERT_EQ(Nccl(r, step).size(), 1u);
      const int64_t exposed = ExposedComm(r, step);
      // All of the transfer is exposed, plus whatever this rank waited for the others.
      EXPECT_GE(exposed, transfer) << step;
      EXPECT_LT(exposed, transfer + 1'000'000) << step;
      const double share = static_cast<double>(exposed) / Wall(r.steps[step]);
      EXPECT_GT(share, 0.25) << step;
      EXPECT_LT(share, 0.40) << step;
    }
  }
}

TEST(MultiRankWorkload, CommStormHasHundredsOfTinyLatencyBoundCollectivesPerStep) {
  const std::vector<SyntheticRank> job = synthetic::GenerateJob(Options(Scenario::kCommStorm));
  for (const SyntheticRank& r : job) {
    for (int step = kFirstSteadyStep; step < kSteps; ++step) {
      const std::vector<KernelEvent> nccl = Nccl(r, step);
      EXPECT_GE(nccl.size(), 300u);
      for (const CollectiveEvent& c : r.steps[step].collectives) {
        EXPECT_GE(c.in_bytes, 16u << 10);
        EXPECT_LE(c.in_bytes, 64u << 10);
      }
      // Latency-bound: tens of microseconds whatever the size.
      std::vector<int64_t> durations;
      for (const KernelEvent& k : nccl) durations.push_back(Duration(k));
      std::nth_element(durations.begin(), durations.begin() + durations.size() / 2,
                       durations.end());
      EXPECT_GE(durations[durations.size() / 2], 25'000);
      EXPECT_LE(durations[durations.size() / 2], 45'000);
    }
  }
}

TEST(MultiRankWorkload, ExpectedVerdictsArePerRank) {
  SyntheticOptions o = Options(Scenario::kStragglerCompute);
  const std::vector<SyntheticRank> job = synthetic::GenerateJob(o);
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(job[r].expected_primary[0], "warmup");
    EXPECT_EQ(job[r].expected_primary[kFirstSteadyStep], r == 2 ? "straggler" : "straggler_wait");
  }
  o.slow_rank = 0;
  EXPECT_EQ(synthetic::ExpectedPrimary(o, 0), "straggler");
  EXPECT_EQ(synthetic::ExpectedPrimary(o, 2), "straggler_wait");
  EXPECT_EQ(synthetic::ExpectedPrimary(Options(Scenario::kExposedComm), 1), "exposed_comm");
  EXPECT_EQ(synthetic::ExpectedPrimary(Options(Scenario::kCommStorm), 3), "comm_storm");
  // No straggler among equals.
  EXPECT_EQ(synthetic::EffectiveSlowRank(Options(Scenario::kCommStorm)), -1);
}

TEST(MultiRankWorkload, TwoRankDemoShowsTheFastRankWaitingInsideTheAllReduce) {
  // scripts/demo.sh: 2 ranks of sync_stall, rank 1 slow.
  SyntheticOptions o = Options(Scenario::kSyncStall, 2);
  o.slow_rank = 1;
  const std::vector<SyntheticRank> job = synthetic::GenerateJob(o);
  for (int step = kFirstSteadyStep; step < kSteps; ++step) {
    const std::vector<KernelEvent> fast = Nccl(job[0], step), slow = Nccl(job[1], step);
    ASSERT_EQ(fast.size(), 1u);
    ASSERT_EQ(slow.size(), 1u);
    EXPECT_NEAR(fast[0].end_ns, slow[0].end_ns, kEndToleranceNs);
    // Rank 0 arrives milliseconds early and spins; rank 1's kernel is only the transfer.
    EXPECT_GT(Duration(fast[0]) - Duration(slow[0]), 5'000'000) << step;
    EXPECT_LT(Duration(slow[0]), 2 * synthetic::AllReduceTransferNs(200ull << 20, 2,
                                                                     synthetic::BusModel{}));
    // And it does not span the step: the all-reduce is the tail of backward.
    EXPECT_LT(Duration(fast[0]), Wall(job[0].steps[step]) / 2) << step;
  }
}

TEST(MultiRankWorkload, SomeRanksOfAJobAreThoseRanksOfTheWholeJob) {
  // Replays on several nodes send different ranks of one job: their collectives must match.
  SyntheticOptions o = Options(Scenario::kStragglerCompute);
  o.clock_skew_ns = 10'000'000;
  const std::vector<SyntheticRank> job = synthetic::GenerateJob(o);
  const std::vector<SyntheticRank> part = synthetic::GenerateRanks(o, 1, 2);
  ASSERT_EQ(part.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(part[i].identity.rank(), 1 + i);
    EXPECT_EQ(part[i].steps, job[1 + i].steps);
    EXPECT_EQ(part[i].expected_primary, job[1 + i].expected_primary);
  }
  EXPECT_EQ(synthetic::GenerateRank(o, 3).steps, job[3].steps);
  EXPECT_EQ(synthetic::GenerateRanks(o, 3, 5).size(), 1u);  // clamped to the job
}

TEST(CollectiveModel, AllReduceTimeFollowsNcclBusBandwidth) {
  const synthetic::BusModel bus{.bus_gb_per_s = 100.0, .latency_ns = 25'000};
  // 4 ranks: algBw = 100 * 4 / 6 GB/s; 1 GB takes 15 ms, plus the latency.
  EXPECT_EQ(synthetic::AllReduceTransferNs(1'000'000'000, 4, bus), 25'000 + 15'000'000);
  // 2 ranks: algBw = busBw.
  EXPECT_EQ(synthetic::AllReduceTransferNs(1'000'000'000, 2, bus), 25'000 + 10'000'000);
  EXPECT_EQ(synthetic::AllReduceTransferNs(1'000'000'000, 1, bus), 25'000);
  EXPECT_EQ(synthetic::CollectiveEndNs({100, 900, 300}, 50), 950);
}

}  // namespace
}  // namespace gpuspy
