// Matching one step's collectives across ranks: waits from arrivals, clock offsets from ends,
// and instances that do not end with the others left unmatched.
#include "analysis/comm/collective_matching.h"

#include <limits>

#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

constexpr int64_t us = 1'000;

StepCollectives Collectives(std::vector<std::pair<int64_t, int64_t>> spans_us) {
  StepCollectives sc;
  sc.kernels = {"ncclDevKernel_AllReduce_Sum_f32_RING_LL"};
  uint32_t index = 0;
  for (auto [start, end] : spans_us) {
    StepCollective c;
    c.start_ns = start * us;
    c.end_ns = end * us;
    c.op = CollectiveOp::kAllReduce;
    c.index = index++;
    sc.ops.push_back(c);
  }
  return sc;
}

TEST(CollectiveMatching, WaitIsTheLastArrivalMinusOwnOnAlignedClocks) {
  // Rank 1's clock runs 7 ms ahead; it arrives 300 us after rank 0 at the first collective.
  const StepCollectives r0 = Collectives({{1000, 2500}, {5000, 5600}});
  const StepCollectives r1 = Collectives({{8300, 9500}, {12000, 12600}});
  const auto t = MatchStepCollectives({{0, &r0}, {1, &r1}});
  EXPECT_EQ(t[1].clock_offset_ns, 7000 * us);
  EXPECT_EQ(t[0].timings[0].wait_ns, 300 * us);
  EXPECT_EQ(t[0].timings[0].transfer_ns, 1200 * us);
  EXPECT_EQ(t[0].timings[0].last_rank, 1);
  EXPECT_EQ(t[1].timings[0].wait_ns, 0);
  EXPECT_EQ(t[0].timings[1].wait_ns, 0);
  EXPECT_EQ(t[0].timings[1].ranks_matched, 2u);
}

TEST(CollectiveMatching, AnInstanceThatDoesNotEndWithTheOthersIsLeftUnmatched) {
  const StepCollectives r0 = Collectives({{1000, 2000}, {3000, 4000}, {6000, 7000}});
  const StepCollectives r1 = Collectives({{1200, 2000}, {3100, 4000}, {6500, 7000}});
  // Rank 2's first "allreduce #0" is another group's: it ends 5 ms later.
  const StepCollectives r2 = Collectives({{1500, 7000}, {3000, 4000}, {6000, 7000}});
  const auto t = MatchStepCollectives({{0, &r0}, {1, &r1}, {2, &r2}});
  EXPECT_EQ(t[2].clock_offset_ns, 0);
  EXPECT_EQ(t[2].timings[0].ranks_matched, 1u);
  EXPECT_EQ(t[2].timings[0].wait_ns, 0);
  EXPECT_EQ(t[0].timings[0].ranks_matched, 2u);
  EXPECT_EQ(t[0].timings[0].wait_ns, 200 * us);  // waited for rank 1, not for rank 2
  EXPECT_EQ(t[0].timings[0].last_rank, 1);
  EXPECT_EQ(t[0].timings[2].wait_ns, 500 * us);
  EXPECT_EQ(t[0].timings[2].ranks_matched, 3u);
}

TEST(CollectiveMatching, SendRecvIsNotMatchedAcrossRanks) {
  StepCollectives r0 = Collectives({{1000, 2000}});
  StepCollectives r1 = Collectives({{1500, 2000}});
  r0.ops[0].op = r1.ops[0].op = CollectiveOp::kSendRecv;
  const auto t = MatchStepCollectives({{0, &r0}, {1, &r1}});
  EXPECT_EQ(t[0].timings[0].ranks_matched, 1u);
  EXPECT_EQ(t[0].timings[0].wait_ns, 0);
  EXPECT_EQ(t[0].timings[0].transfer_ns, 1000 * us);
}

TEST(CollectiveMatching, TheReferenceClockIsTheFirstRankWithACollective) {
  const StepCollectives none;
  const StepCollectives r1 = Collectives({{1000, 2000}});
  const StepCollectives r2 = Collectives({{51500, 52000}});  // 50 ms ahead, arrived 500 us late
  const auto t = MatchStepCollectives({{0, &none}, {1, &r1}, {2, &r2}});
  EXPECT_EQ(t[2].clock_offset_ns, 50'000 * us);
  EXPECT_EQ(t[1].timings[0].wait_ns, 500 * us);
}

// A broken or hostile producer can send any timestamps: clocks that far apart must give an
// answer, not an overflow (UBSan runs these tests).
TEST(CollectiveMatching, TimestampsAtTheEndsOfTheRangeDoNotOverflow) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  StepCollectives r0 = Collectives({});
  StepCollectives r1 = Collectives({});
  StepCollective c;
  c.op = CollectiveOp::kAllReduce;
  c.start_ns = kMax - 10;
  c.end_ns = kMax;
  r0.ops.push_back(c);
  c.start_ns = kMin;
  c.end_ns = kMin + 10;
  r1.ops.push_back(c);
  const auto t = MatchStepCollectives({{0, &r0}, {1, &r1}});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_GE(t[0].timings[0].wait_ns, 0);
  EXPECT_LE(t[0].timings[0].wait_ns, 10);
  EXPECT_EQ(t[0].timings[0].wait_ns + t[0].timings[0].transfer_ns, 10);
}

}  // namespace
}  // namespace gpuspy::analysis
