// The one step rule (analysis/step_finder.h): NVTX steps batch by batch with a repeated number
// replacing the earlier one, else the kernel period, else fixed windows; what a source indexed or
// remembered is used instead of reading its batches.
#include "analysis/step_finder.h"

#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/in_memory_batches.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy::analysis {
namespace {

using ::testing::ElementsAre;

std::vector<int64_t> Numbers(const std::vector<StepWindow>& steps) {
  std::vector<int64_t> n;
  for (const StepWindow& s : steps) n.push_back(s.number);
  return n;
}

// A source over batches in memory that counts how often its batches are read and may keep an
// index or a remembered detection.
class CountingSource : public BatchSource {
 public:
  CountingSource(std::vector<EventColumns> batches, const StringTable& strings)
      : batches_(std::move(batches)), strings_(strings) {}

  absl::StatusOr<std::optional<std::vector<StepWindow>>> IndexedNvtxSteps() override { return index; }
  std::optional<std::vector<StepWindow>> RememberedDetection() override { return remembered; }
  void RememberDetection(const std::vector<StepWindow>& steps) override { remembered = steps; }
  absl::Status ForEachBatch(Visit visit) override {
    ++full_reads;
    for (const EventColumns& b : batches_) visit(b, strings_);
    return absl::OkStatus();
  }
  absl::Status ForEachBatchIn(int64_t, int64_t, Visit visit) override { return ForEachBatch(visit); }
  absl::StatusOr<std::string> WithWindow(int64_t, int64_t, Visit) override { return std::string(); }

  std::optional<std::vector<StepWindow>> index;
  std::optional<std::vector<StepWindow>> remembered;
  int full_reads = 0;

 private:
  std::vector<EventColumns> batches_;
  const StringTable& strings_;
};

class StepFinderTest : public ::testing::Test {
 protected:
  EventColumns Range(const std::string& message, int64_t start, int64_t end) {
    EventColumns b;
    b.nvtx_ranges.push_back({start, end, strings_.Intern("torch"), strings_.Intern(message), 101, 0});
    return b;
  }
  StringTable strings_;
};

TEST_F(StepFinderTest, NvtxStepsAreFoundBatchByBatchAndALaterRecordOfANumberReplacesTheEarlier) {
  CountingSource source({Range("ProfilerStep#2", 2'000, 3'000), Range("ProfilerStep#1", 1'000, 2'000),
                         Range("ProfilerStep#2", 2'000, 3'500)},
                        strings_);
  absl::StatusOr<std::vector<StepWindow>> steps = FindSteps(source, StepPolicy{});
  ASSERT_TRUE(steps.ok()) << steps.status();
  ASSERT_THAT(Numbers(*steps), ElementsAre(1, 2));
  EXPECT_EQ((*steps)[1], (StepWindow{2, 2'000, 3'500, "nvtx:ProfilerStep#(\\d+)"}));
  EXPECT_EQ(source.full_reads, 1);
  EXPECT_FALSE(source.remembered.has_value()) << "NVTX steps are not a detection";
}

TEST_F(StepFinderTest, TheStepPatternOfThePolicyDecidesWhichRangesAreSteps) {
  CountingSource source({Range("train_step_7", 0, 100), Range("ProfilerStep#1", 100, 200)}, strings_);
  absl::StatusOr<std::vector<StepWindow>> steps =
      FindSteps(source, StepPolicy::ForPattern(R"(train_step_(\d+))"));
  ASSERT_TRUE(steps.ok());
  EXPECT_THAT(Numbers(*steps), ElementsAre(7));
}

TEST_F(StepFinderTest, AnIndexedSourceIsNotReadForNvtxSteps) {
  CountingSource source({Range("ProfilerStep#1", 0, 100)}, strings_);
  source.index = std::vector<StepWindow>{{5, 10, 20, "nvtx:x"}, {4, 0, 10, "nvtx:x"}};
  absl::StatusOr<std::vector<StepWindow>> steps = FindSteps(source, StepPolicy{});
  ASSERT_TRUE(steps.ok());
  EXPECT_THAT(Numbers(*steps), ElementsAre(4, 5)) << "in step number order";
  EXPECT_EQ(source.full_reads, 0);
}

TEST_F(StepFinderTest, WithoutNvtxStepsTheKernelPeriodGivesTheStepsAndTheSourceRemembersThem) {
  synthetic::SyntheticOptions o;
  o.nvtx_steps = false;
  o.steps = 12;
  synthetic::SyntheticRank rank = synthetic::GenerateRank(o, 0);
  CountingSource source(rank.steps, rank.strings);
  source.index = std::vector<StepWindow>{};  // indexed, and no NVTX step among them
  absl::StatusOr<std::vector<StepWindow>> steps = FindSteps(source, StepPolicy{});
  ASSERT_TRUE(steps.ok());
  ASSERT_GE(steps->size(), 8u);
  EXPECT_THAT((*steps)[0].source, ::testing::StartsWith("period:"));
  for (size_t i = 1; i < steps->size(); ++i) EXPECT_LT((*steps)[i - 1].number, (*steps)[i].number);
  EXPECT_EQ(source.full_reads, 1);
  ASSERT_TRUE(source.remembered.has_value());
  EXPECT_EQ(*source.remembered, *steps);
  // Asked again, what it remembered is the answer: no batch is read.
  absl::StatusOr<std::vector<StepWindow>> again = FindSteps(source, StepPolicy{});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *steps);
  EXPECT_EQ(source.full_reads, 1);
}

TEST_F(StepFinderTest, WithoutNvtxOrAPeriodTheActivityIsCutIntoWindowsOfThePolicysLength) {
  EventColumns b;
  const StringRef name = strings_.Intern("k");
  for (int64_t t : {0LL, 1'500'000'000LL, 2'600'000'000LL}) {
    b.kernels.push_back({});
    b.kernels.back().start_ns = t;
    b.kernels.back().end_ns = t + 1'000;
    b.kernels.back().name = name;
  }
  CountingSource source({b}, strings_);
  StepPolicy policy;
  policy.window_ns = 1'000'000'000;
  absl::StatusOr<std::vector<StepWindow>> steps = FindSteps(source, policy);
  ASSERT_TRUE(steps.ok());
  ASSERT_EQ(steps->size(), 3u);
  EXPECT_EQ((*steps)[0].source, "window:1000ms");
  EXPECT_EQ((*steps)[1].start_ns - (*steps)[0].start_ns, 1'000'000'000);
}

TEST_F(StepFinderTest, NvtxStepsOfABatchWithoutRangesAreNone) {
  EventColumns empty;
  EXPECT_TRUE(NvtxStepsOfBatch(StepSegmenter(), empty, strings_).empty());
  EXPECT_THAT(Numbers(NvtxStepsOfBatch(StepSegmenter(), Range("ProfilerStep#3", 0, 5), strings_)),
              ElementsAre(3));
}

}  // namespace
}  // namespace gpuspy::analysis
