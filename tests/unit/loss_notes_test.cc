// Which steps a process's losses fall into: drops past the spill bound (a gap in the batch
// sequence and counters that grew), CUPTI drops (counters only), batches lost without a count,
// and steps no loss touches.
#include "collector/query/loss_notes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuspy::collector {
namespace {

// Ten steps of 100 ns each: step i is [100 i, 100 i + 99].
std::vector<StepRecord> TenSteps() {
  std::vector<StepRecord> steps;
  for (int64_t i = 0; i < 10; ++i) steps.push_back({1, i, 100 * i, 100 * i + 99, "nvtx"});
  return steps;
}

BatchMark Mark(uint64_t seq, int64_t min_ns, int64_t max_ns, LossCounters loss = {}) {
  return {seq, min_ns, max_ns, loss};
}

std::vector<std::string> Notes(const std::vector<BatchMark>& marks, uint64_t max_sequence,
                               const LossCounters& latest) {
  const std::vector<StepRecord> steps = TenSteps();
  StepLossNotes notes(FindLossSpans(marks, max_sequence, latest), steps);
  std::vector<std::string> out;
  for (const StepRecord& s : steps) out.push_back(notes.For(s));
  return out;
}

TEST(LossNotes, NothingLostNothingSaid) {
  const auto notes = Notes({Mark(1, 0, 499), Mark(2, 500, 999)}, 2, {});
  for (const std::string& n : notes) EXPECT_EQ(n, "");
}

TEST(LossNotes, SpillDropsNameTheStepsBetweenTheStoredNeighbours) {
  // Batches 3 and 4 (steps 3-5) were dropped past the spill bound; batch 5 carries the count.
  const auto notes = Notes({Mark(1, 0, 149), Mark(2, 150, 299), Mark(5, 600, 999, {0, 0, 800})}, 5,
                           {0, 0, 800});
  const std::string want =
      "capture incomplete: 800 events dropped in steps 3\u20135 (spill bound reached: 800)";
  for (int i = 0; i < 10; ++i) EXPECT_EQ(notes[i], i >= 3 && i <= 5 ? want : "") << i;
}

TEST(LossNotes, DropsBeforeTheFirstStoredBatchNameTheStepsFromTheStart) {
  const auto notes = Notes({Mark(3, 300, 999, {0, 0, 120})}, 3, {0, 0, 120});
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(notes[i].empty(), i > 2) << i << ": " << notes[i];
  }
  EXPECT_NE(notes[0].find("120 events dropped in steps 0\u20132"), std::string::npos) << notes[0];
}

TEST(LossNotes, CuptiDropsFallInTheBatchThatCountedThem) {
  const auto notes =
      Notes({Mark(1, 0, 399), Mark(2, 400, 599, {30, 0, 0}), Mark(3, 600, 999, {30, 0, 0})}, 3,
            {30, 0, 0});
  for (int i = 0; i < 10; ++i) EXPECT_EQ(notes[i].empty(), i < 4 || i > 5) << i;
  EXPECT_EQ(notes[4], "capture incomplete: 30 events dropped in steps 4\u20135 (CUPTI buffers full: 30)");
}

TEST(LossNotes, BatchesMissingWithoutADropCountAreReportedAsMissing) {
  // Batch 2 was stored once and lost since (a damaged segment): no producer counter grew.
  const auto notes = Notes({Mark(1, 0, 249), Mark(3, 500, 999)}, 3, {});
  EXPECT_EQ(notes[3], "capture incomplete: 1 batch missing in steps 2\u20134");
  EXPECT_EQ(notes[1], "");
  EXPECT_EQ(notes[5], "");
}

TEST(LossNotes, LossAfterTheLastStoredBatchNamesTheStepsAfterIt) {
  const auto notes = Notes({Mark(1, 0, 649)}, 4, {});
  for (int i = 0; i < 10; ++i) EXPECT_EQ(notes[i].empty(), i < 6) << i;
  EXPECT_EQ(notes[9], "capture incomplete: 3 batches missing in steps 6\u20139");
}

TEST(LossNotes, NearbyLossesMergeIntoOneNote) {
  const auto notes = Notes({Mark(1, 0, 199), Mark(3, 250, 299, {0, 0, 10}),
                            Mark(5, 350, 999, {0, 0, 25})},
                           5, {0, 0, 25});
  // Steps 2 and 3 each lost a batch: one note for both.
  EXPECT_EQ(notes[2], "capture incomplete: 25 events dropped in steps 2\u20133 (spill bound reached: 25)");
  EXPECT_EQ(notes[3], notes[2]);
  EXPECT_EQ(notes[1], "");
  EXPECT_EQ(notes[4], "");
}

TEST(LossNotes, StepsSwallowedWholeAreNamedByTheStepsAroundThem) {
  // Steps 4-6 vanished with their NVTX ranges: the report has no such steps; 3 and 7 tell.
  std::vector<StepRecord> steps = TenSteps();
  steps.erase(steps.begin() + 4, steps.begin() + 7);
  StepLossNotes notes(
      FindLossSpans({Mark(1, 0, 399), Mark(3, 700, 999, {0, 0, 300})}, 3, {0, 0, 300}), steps);
  const std::string want =
      "capture incomplete: 300 events dropped in steps 4\u20136 (spill bound reached: 300)";
  for (const StepRecord& s : steps) {
    EXPECT_EQ(notes.For(s), s.number == 3 || s.number == 7 ? want : "") << s.number;
  }
  // Without step numbers in between, the loss is placed between its neighbours.
  std::vector<StepRecord> adjacent = {{1, 0, 0, 99, "p"}, {1, 1, 200, 299, "p"}};
  StepLossNotes between(FindLossSpans({Mark(1, 0, 99), Mark(3, 200, 299, {0, 0, 9})}, 3, {0, 0, 9}),
                        adjacent);
  EXPECT_EQ(between.For(adjacent[1]),
            "capture incomplete: 9 events dropped between step 0 and step 1 (spill bound reached: 9)");
}

TEST(LossNotes, StepsSwallowedNextToAPartlyStoredStepAreNamedWithIt) {
  // Steps 4-6 vanished; step 7's range survived (its end was stored) but it lies in the stretch.
  std::vector<StepRecord> steps = TenSteps();
  steps.erase(steps.begin() + 4, steps.begin() + 7);
  StepLossNotes notes(
      FindLossSpans({Mark(1, 0, 399), Mark(3, 750, 999, {0, 0, 300})}, 3, {0, 0, 300}), steps);
  EXPECT_EQ(notes.For(steps[4]),  // step 7
            "capture incomplete: 300 events dropped in steps 4\u20137 (spill bound reached: 300)");
  EXPECT_EQ(notes.For(steps[3]), "");  // step 3 ended before the stretch
}

TEST(LossNotes, OneStepIsNamedAsAStep) {
  std::vector<StepRecord> one = {{1, 42, 0, 1000, "nvtx"}};
  StepLossNotes single(FindLossSpans({Mark(1, 0, 10), Mark(2, 20, 30, {7, 0, 0})}, 2, {7, 0, 0}),
                       one);
  EXPECT_EQ(single.For(one[0]), "capture incomplete: 7 events dropped in step 42 (CUPTI buffers full: 7)");
}

}  // namespace
}  // namespace gpuspy::collector
