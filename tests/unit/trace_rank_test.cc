#include "importers/kineto/trace_rank.h"

#include <gtest/gtest.h>

namespace gpuspy::importers {
namespace {

TEST(TraceRankTest, TheFileNameSaysTheRankInTheUsualSpellings) {
  EXPECT_EQ(RankInFileName("/runs/7/rank3.pt.trace.json.gz"), 3);
  EXPECT_EQ(RankInFileName("sampled_rank-12.json.gz"), 12);
  EXPECT_EQ(RankInFileName("worker_rank_0.json"), 0);
  EXPECT_EQ(RankInFileName("RANK5.json"), 5);
  EXPECT_EQ(RankInFileName("host_a_RANK_07_step_3.json"), 7);
}

TEST(TraceRankTest, NamesWithoutARankSayNone) {
  EXPECT_EQ(RankInFileName("trace.json.gz"), std::nullopt);
  EXPECT_EQ(RankInFileName("frank3.json"), std::nullopt);     // a word that ends in "rank"
  EXPECT_EQ(RankInFileName("ranking.json"), std::nullopt);    // no number after it
  EXPECT_EQ(RankInFileName("/data/rank3/trace.json"), std::nullopt);  // a directory, not the file
  EXPECT_EQ(RankInFileName("rank99999999999.json"), std::nullopt);    // beyond int32
}

TEST(TraceRankTest, WithoutOneThePositionAmongTheFilesIsTheRank) {
  EXPECT_EQ(ImpliedRank("b.json", 1), 1);
  EXPECT_EQ(ImpliedRank("rank4.json", 1), 4);
}

}  // namespace
}  // namespace gpuspy::importers
