// The text that selects one side of `gpuspy diff` (and /api/diff): job, rank, step range.
#include "analysis/diff/run_selector.h"

#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

TEST(RunSelectorTest, JobRankAndStepsSplitOff) {
  absl::StatusOr<RunSelector> s = ParseRunSelector("bert@3:100-200");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->base, "bert");
  EXPECT_EQ(s->rank, 3);
  EXPECT_EQ(s->steps.first, 100);
  EXPECT_EQ(s->steps.last, 200);
  EXPECT_EQ(SelectorLabel(*s), "bert@3:100-200");
  EXPECT_TRUE(s->steps.Contains(100));
  EXPECT_TRUE(s->steps.Contains(200));
  EXPECT_FALSE(s->steps.Contains(201));
}

TEST(RunSelectorTest, OpenRangesAndASingleStep) {
  absl::StatusOr<RunSelector> from = ParseRunSelector("j:5-");
  ASSERT_TRUE(from.ok());
  EXPECT_EQ(from->steps.first, 5);
  EXPECT_FALSE(from->steps.last.has_value());
  EXPECT_FALSE(from->rank.has_value());
  absl::StatusOr<RunSelector> upto = ParseRunSelector("j:-5");
  ASSERT_TRUE(upto.ok());
  EXPECT_FALSE(upto->steps.first.has_value());
  EXPECT_EQ(upto->steps.last, 5);
  absl::StatusOr<RunSelector> one = ParseRunSelector("j@0:7");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->steps.first, 7);
  EXPECT_EQ(one->steps.last, 7);
  EXPECT_EQ(SelectorLabel(*ParseRunSelector("j")), "j");
}

TEST(RunSelectorTest, PathsKeepTheirSeparatorsAndOnlyTheLastPartIsRead) {
  absl::StatusOr<RunSelector> s = ParseRunSelector("runs/a:b@c/rank0.json.gz@1");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->base, "runs/a:b@c/rank0.json.gz");
  EXPECT_EQ(s->rank, 1);
}

TEST(RunSelectorTest, MistakesAreNamed) {
  absl::StatusOr<RunSelector> reversed = ParseRunSelector("j:9-3");
  ASSERT_FALSE(reversed.ok());
  EXPECT_NE(reversed.status().message().find("reversed: did you mean 3-9?"), std::string::npos)
      << reversed.status();
  EXPECT_FALSE(ParseRunSelector("j@x").ok());
  EXPECT_FALSE(ParseRunSelector("j@-1").ok());
  EXPECT_FALSE(ParseRunSelector("j:a-b").ok());
  EXPECT_FALSE(ParseRunSelector("j:-").ok());
  EXPECT_FALSE(ParseRunSelector("@1").ok());
  EXPECT_FALSE(ParseStepRange("").ok());
}

}  // namespace
}  // namespace gpuspy::analysis
