// Each rank's figures over its steady steps (JobSummary.ranks, analysis/rank_matrix.h): the job
// page's ranks table and the CLI render these and compute none of them.
#include <gtest/gtest.h>

#include "analysis/rank_matrix.h"
#include "analysis/time_parts.h"

namespace gpuspy::analysis {
namespace {

v1::StepReport Step(uint64_t process, int64_t n, int64_t wall_ns, int64_t wait_ns, bool straggler = false) {
  v1::StepReport r;
  r.mutable_step()->set_process_id(process);
  r.mutable_step()->set_number(n);
  r.set_steady_state(true);
  v1::StepBreakdown* b = r.mutable_breakdown();
  b->set_wall_ns(wall_ns);
  b->set_gpu_busy_ns(wall_ns);
  b->set_kernel_ns(wall_ns);
  b->set_comm_wait_ns(wait_ns);
  b->set_exposed_comm_ns(wait_ns);
  SetTimeParts(b);
  if (straggler) {
    v1::Finding* f = r.add_findings();
    f->set_detector(v1::straggler);
    f->set_lost_ns(7'000'000);
    f->set_severity(v1::critical);
    f->set_title("this rank is the slowest");
  }
  return r;
}

TEST(RankSummary, OwnWorkIsTheStepLessWaitingAndIsComparedWithTheFastestRank) {
  std::vector<v1::StepReport> steps;
  for (int64_t n = 1; n <= 3; ++n) {
    steps.push_back(Step(1, n, 100'000'000, 30'000'000));       // 70 ms own work
    steps.push_back(Step(2, n, 100'000'000, 0, /*straggler=*/true));  // 100 ms own work
  }
  v1::JobSummary s;
  AddRankMatrix(steps, {{1, 0, "a"}, {2, 1, "b"}}, &s);
  ASSERT_EQ(s.ranks_size(), 2);
  const v1::RankSummary& fast = s.ranks(0);
  const v1::RankSummary& slow = s.ranks(1);
  EXPECT_EQ(fast.steady_steps(), 3u);
  EXPECT_EQ(fast.median_own_work_ns(), 70'000'000);
  EXPECT_DOUBLE_EQ(fast.own_work_over_fastest(), 0.0);
  EXPECT_FALSE(fast.slow_own_work());
  EXPECT_NEAR(slow.own_work_over_fastest(), 100.0 / 70.0 - 1.0, 1e-9);
  EXPECT_TRUE(slow.slow_own_work());
  EXPECT_EQ(slow.straggler_findings(), 3u);
  EXPECT_EQ(slow.straggler_median_lost_ns(), 7'000'000);
  EXPECT_EQ(slow.straggler_severity(), v1::critical);
  // The median parts of the waiting rank: compute and the wait, as its steps split them.
  EXPECT_EQ(PartNs(fast.median_parts(), v1::TIME_CAUSE_COMPUTE), 70'000'000);
  EXPECT_EQ(PartNs(fast.median_parts(), v1::TIME_CAUSE_COMM_WAIT), 30'000'000);
  // The per-step wait figures across ranks.
  ASSERT_EQ(s.steps_size(), 3);
  EXPECT_EQ(s.steps(0).min_wait_ns(), 0);
  EXPECT_EQ(s.steps(0).median_wait_ns(), 30'000'000);  // upper median of {0, 30}
  EXPECT_EQ(s.steps(0).max_wait_ns(), 30'000'000);
}

TEST(RankSummary, RanksWithinTheNoiseOfTheFastestAreNotMarkedSlow) {
  std::vector<v1::StepReport> steps;
  for (int64_t n = 1; n <= 3; ++n) {
    steps.push_back(Step(1, n, 100'000'000, 0));
    steps.push_back(Step(2, n, 104'000'000, 0));  // 4% more own work: under the 5% bar
  }
  v1::JobSummary s;
  AddRankMatrix(steps, {{1, 0, "a"}, {2, 1, "b"}}, &s);
  ASSERT_EQ(s.ranks_size(), 2);
  EXPECT_GT(s.ranks(1).own_work_over_fastest(), 0.0);
  EXPECT_FALSE(s.ranks(1).slow_own_work());
}

}  // namespace
}  // namespace gpuspy::analysis
