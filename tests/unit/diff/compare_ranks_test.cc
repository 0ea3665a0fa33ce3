// The two ranks of a job worth comparing (JobSummary.compare_ranks).
#include "analysis/diff/compare_ranks.h"

#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

void AddRank(v1::JobSummary* s, int32_t rank, int64_t wall, int64_t wait, uint64_t straggler) {
  v1::RankSummary* r = s->add_ranks();
  r->set_rank(rank);
  r->set_median_wall_ns(wall);
  r->set_median_wait_ns(wait);
  r->set_straggler_steps(straggler);
}

TEST(CompareRanksTest, TheStragglerAgainstTheRankWithLeastOwnWork) {
  v1::JobSummary s;
  // Equal step times (the all-reduce equalises them); rank 2 is waited for, rank 3 waits most.
  AddRank(&s, 0, 100, 30, 0);
  AddRank(&s, 1, 100, 20, 0);
  AddRank(&s, 2, 100, 0, 8);
  AddRank(&s, 3, 100, 35, 0);
  const std::optional<v1::RankPair> p = RanksToCompare(s);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->b(), 2);
  EXPECT_EQ(p->a(), 3);
}

TEST(CompareRanksTest, NoStragglerMeansTheMostOwnWork) {
  v1::JobSummary s;
  AddRank(&s, 0, 100, 0, 0);
  AddRank(&s, 1, 120, 0, 0);
  AddRank(&s, 2, 90, 0, 0);
  const std::optional<v1::RankPair> p = RanksToCompare(s);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->b(), 1);
  EXPECT_EQ(p->a(), 2);
}

TEST(CompareRanksTest, OneRankHasNothingToCompare) {
  v1::JobSummary s;
  EXPECT_FALSE(RanksToCompare(s).has_value());
  AddRank(&s, 0, 100, 0, 0);
  EXPECT_FALSE(RanksToCompare(s).has_value());
}

}  // namespace
}  // namespace gpuspy::analysis
