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


RankedFile Unranked(const std::string& path, int32_t position, uint32_t pid, int64_t first_s,
                    int64_t last_s) {
  constexpr int64_t kS = 1000 * 1000 * 1000;
  return {path, position, /*rank_stated=*/false, pid, first_s * kS, last_s * kS};
}

TEST(TraceRankTest, TwoFilesOfOneRankAreNoJob) {
  const RankedFile a{"a.json", 0, true, 10, 0, 1};
  const RankedFile b{"b.json", 0, true, 11, 0, 1};
  const std::optional<std::string> why = NotOneJob({a, b});
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->find("a.json and b.json are both rank 0: the files of one job are its ranks"), 0u)
      << *why;
}

// Files that say no rank are numbered by position, a guess that holds for ranks of one run: two
// processes tracing the same stretch of time.
TEST(TraceRankTest, UnrankedFilesOfOneRunAreOneJob) {
  EXPECT_EQ(NotOneJob({Unranked("a.json", 0, 100, 1000, 1010), Unranked("b.json", 1, 101, 1002, 1011),
                       Unranked("c.json", 2, 102, 1000 + 3500, 1000 + 3510)}),
            std::nullopt);  // c started 58 min after a ended: still one run
}

TEST(TraceRankTest, UnrankedFilesHoursApartAreTwoRuns) {
  const std::optional<std::string> why =
      NotOneJob({Unranked("a.json", 0, 100, 1000, 1010), Unranked("b.json", 1, 101, 1010 + 3 * 3600, 1010 + 3 * 3600 + 5)});
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "a.json and b.json say no rank and were recorded 3.0 h apart, not two ranks of one "
                  "run: the files of one job are its ranks, one each (two separate runs are two "
                  "jobs: give each its own --job)");
  // Near miss: just under the gap.
  EXPECT_EQ(NotOneJob({Unranked("a.json", 0, 100, 1000, 1010),
                       Unranked("b.json", 1, 101, 1010 + 3599, 1010 + 3605)}),
            std::nullopt);
}

TEST(TraceRankTest, OneProcessTracedTwiceIsNotTwoRanks) {
  const std::optional<std::string> why =
      NotOneJob({Unranked("a.json", 0, 4242, 1000, 1010), Unranked("b.json", 1, 4242, 1020, 1030)});
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->find("a.json and b.json say no rank and are the same process (pid 4242) twice"), 0u)
      << *why;
  // A pid the traces do not say (0) is no evidence.
  EXPECT_EQ(NotOneJob({Unranked("a.json", 0, 0, 1000, 1010), Unranked("b.json", 1, 0, 1020, 1030)}),
            std::nullopt);
}

// Ranks that the traces or their names state are taken at their word: two ranks of one job
// profiled hours apart, or in containers whose pids repeat, stay one job.
TEST(TraceRankTest, StatedRanksAreNotSecondGuessed) {
  RankedFile a = Unranked("rank0.json", 0, 1, 1000, 1010);
  RankedFile b = Unranked("rank1.json", 1, 1, 1000 + 5 * 3600, 1010 + 5 * 3600);
  a.rank_stated = b.rank_stated = true;
  EXPECT_EQ(NotOneJob({a, b}), std::nullopt);
  // One stated, one guessed: the guess is what is doubted, and only against other guesses.
  b.rank_stated = false;
  EXPECT_EQ(NotOneJob({a, b}), std::nullopt);
}

TEST(TraceRankTest, NotOneJobWithChecksOnlyTheNewFile) {
  const std::vector<RankedFile> earlier{Unranked("a.json", 0, 100, 1000, 1010)};
  EXPECT_TRUE(NotOneJobWith(earlier, Unranked("b.json", 1, 100, 1000, 1010)).has_value());
  EXPECT_FALSE(NotOneJobWith(earlier, Unranked("b.json", 1, 101, 1000, 1010)).has_value());
}

}  // namespace
}  // namespace gpuspy::importers
