// Step segmentation from NVTX ranges.
#include "analysis/step_segmenter.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

class StepSegmenterTest : public ::testing::Test {
 protected:
  void Range(const std::string& message, int64_t start, int64_t end) {
    events_.nvtx_ranges.push_back({start, end, strings_.Intern("torch"), strings_.Intern(message),
                                   101, 0});
  }
  std::vector<int64_t> Numbers(const std::vector<StepWindow>& steps) {
    std::vector<int64_t> n;
    for (const auto& s : steps) n.push_back(s.number);
    return n;
  }

  StringTable strings_;
  EventColumns events_;
};

TEST_F(StepSegmenterTest, ProfilerStepRangesGiveNumberedStepsOrderedByStart) {
  Range("ProfilerStep#13", 2'000, 3'000);
  Range("ProfilerStep#12", 1'000, 2'000);
  Range("ProfilerStep#14", 3'000, 4'500);
  const StepSegmenter seg;
  ASSERT_TRUE(seg.valid());
  const std::vector<StepWindow> steps = seg.FindSteps(events_, strings_);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0], (StepWindow{12, 1'000, 2'000, "nvtx:ProfilerStep#(\\d+)"}));
  EXPECT_EQ(steps[1], (StepWindow{13, 2'000, 3'000, "nvtx:ProfilerStep#(\\d+)"}));
  EXPECT_EQ(steps[2], (StepWindow{14, 3'000, 4'500, "nvtx:ProfilerStep#(\\d+)"}));
}

TEST_F(StepSegmenterTest, LargeStepNumbersAreParsed) {
  Range("ProfilerStep#1234567890123", 0, 10);
  const auto steps = StepSegmenter().FindSteps(events_, strings_);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].number, 1234567890123);
}

TEST_F(StepSegmenterTest, RangesNotMatchingTheWholePatternAreIgnored) {
  Range("ProfilerStep#5", 100, 200);
  Range("aten::matmul", 110, 120);
  Range("ProfilerStep#", 120, 130);           // no number
  Range("ProfilerStep#6 extra", 130, 140);    // must match the whole message
  Range("xProfilerStep#7", 140, 150);
  Range("profilerstep#8", 150, 160);          // case matters
  const auto steps = StepSegmenter().FindSteps(events_, strings_);
  EXPECT_THAT(Numbers(steps), ::testing::ElementsAre(5));
}

TEST_F(StepSegmenterTest, EmptyAndUnnamedRangesAreIgnored) {
  Range("ProfilerStep#1", 100, 100);  // zero length
  Range("ProfilerStep#2", 300, 200);  // reversed
  events_.nvtx_ranges.push_back({0, 50, 0, 0, 1, 0});  // no message
  Range("ProfilerStep#3", 400, 500);
  EXPECT_THAT(Numbers(StepSegmenter().FindSteps(events_, strings_)), ::testing::ElementsAre(3));
}

TEST_F(StepSegmenterTest, RepeatedMessagesAreEachAStep) {
  // The verdict per message is cached; every range with the message is still a step.
  Range("train_step", 0, 10);
  Range("train_step", 20, 30);
  Range("train_step", 10, 20);
  const StepSegmenter seg("train_step");
  ASSERT_TRUE(seg.valid());
  const auto steps = seg.FindSteps(events_, strings_, /*first_ordinal=*/1);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_THAT(Numbers(steps), ::testing::ElementsAre(1, 2, 3));
  EXPECT_EQ(steps[1].start_ns, 10);
  EXPECT_EQ(steps[2].start_ns, 20);
  EXPECT_EQ(steps[0].source, "nvtx:train_step");
}

TEST_F(StepSegmenterTest, CustomPatternWithoutGroupIsNumberedByOrdinalInStartOrder) {
  Range("iteration", 500, 600);
  Range("forward", 100, 150);
  Range("iteration", 100, 200);
  Range("iteration", 300, 400);
  const StepSegmenter seg("iter(ation)?");  // a group that captures no digits
  ASSERT_TRUE(seg.valid());
  const auto steps = seg.FindSteps(events_, strings_, /*first_ordinal=*/7);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_THAT(Numbers(steps), ::testing::ElementsAre(7, 8, 9));
  EXPECT_EQ(steps[0].start_ns, 100);
  EXPECT_EQ(steps[1].start_ns, 300);
  EXPECT_EQ(steps[2].start_ns, 500);

  const auto plain = StepSegmenter("iteration").FindSteps(events_, strings_);
  EXPECT_THAT(Numbers(plain), ::testing::ElementsAre(0, 1, 2));
}

TEST_F(StepSegmenterTest, InvalidPatternIsReportedAndFindsNoSteps) {
  Range("ProfilerStep#1", 0, 100);
  for (const char* bad : {"ProfilerStep#(\\d+", "[unclosed", "*star"}) {
    const StepSegmenter seg(bad);
    EXPECT_FALSE(seg.valid()) << bad;
    EXPECT_TRUE(seg.FindSteps(events_, strings_).empty()) << bad;
  }
}

TEST_F(StepSegmenterTest, NoRangesNoSteps) {
  EXPECT_TRUE(StepSegmenter().FindSteps(events_, strings_).empty());
}

}  // namespace
}  // namespace gpuspy::analysis
