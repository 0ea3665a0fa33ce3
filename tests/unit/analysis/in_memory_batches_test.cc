// A trace held in memory as a BatchSource (analysis/in_memory_batches.h): cut as `gpuspy import`
// cuts it, batches selected by the storage index's overlap rule, a step's window appended in
// batch order.
#include "analysis/in_memory_batches.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

using ::testing::ElementsAre;

EventColumns Kernels(const std::vector<std::pair<int64_t, int64_t>>& spans) {
  EventColumns b;
  for (auto [start, end] : spans) {
    b.kernels.push_back({});
    b.kernels.back().start_ns = start;
    b.kernels.back().end_ns = end;
  }
  return b;
}

TEST(InMemoryBatches, ATraceIsCutIntoImportSizedBatchesEachWithItsTimeRange) {
  EventColumns all;
  for (int64_t i = 0; i < 10'000; ++i) {
    all.kernels.push_back({});
    all.kernels.back().start_ns = i * 10;
    all.kernels.back().end_ns = i * 10 + 5;
  }
  const ImportBatches cut = CutIntoImportBatches(all);
  ASSERT_EQ(cut.batches.size(), cut.ranges.size());
  size_t events = 0;
  for (size_t i = 0; i < cut.batches.size(); ++i) {
    EXPECT_LE(cut.batches[i].size(), kEventsPerImportBatch);
    EXPECT_EQ(cut.ranges[i], cut.batches[i].TimeRange());
    events += cut.batches[i].size();
  }
  EXPECT_EQ(events, all.size());
  EXPECT_GE(cut.batches.size(), 3u);
}

class InMemoryBatchesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto spans : {std::vector<std::pair<int64_t, int64_t>>{{0, 10}, {20, 30}},
                       std::vector<std::pair<int64_t, int64_t>>{{30, 40}, {45, 50}},
                       std::vector<std::pair<int64_t, int64_t>>{{60, 70}}}) {
      batches_.batches.push_back(Kernels(spans));
      batches_.ranges.push_back(batches_.batches.back().TimeRange());
    }
  }
  // The first kernel's start of each batch visited.
  std::vector<int64_t> Visited(int64_t from_ns, int64_t to_ns) {
    InMemoryBatches source(batches_, strings_);
    std::vector<int64_t> out;
    EXPECT_TRUE(source.ForEachBatchIn(from_ns, to_ns, [&](const EventColumns& b, const StringTable& s) {
      EXPECT_EQ(&s, &strings_);
      out.push_back(b.kernels.front().start_ns);
    }).ok());
    return out;
  }

  StringTable strings_;
  ImportBatches batches_;
};

TEST_F(InMemoryBatchesTest, BatchesOverlappingAStretchAreThoseTheStorageIndexWouldReturn) {
  // A batch ending exactly where the stretch begins is in (latest end >= from), one beginning
  // where it ends is not (earliest start < to).
  EXPECT_THAT(Visited(30, 60), ElementsAre(0, 30));
  EXPECT_THAT(Visited(31, 61), ElementsAre(30, 60));
  EXPECT_THAT(Visited(71, 100), ElementsAre());
}

TEST_F(InMemoryBatchesTest, EveryBatchIsVisitedInOrder) {
  InMemoryBatches source(batches_, strings_);
  std::vector<int64_t> starts;
  ASSERT_TRUE(source.ForEachBatch([&](const EventColumns& b, const StringTable&) {
    starts.push_back(b.kernels.front().start_ns);
  }).ok());
  EXPECT_THAT(starts, ElementsAre(0, 30, 60));
  absl::StatusOr<std::optional<std::vector<StepWindow>>> indexed = source.IndexedNvtxSteps();
  ASSERT_TRUE(indexed.ok());
  EXPECT_FALSE(indexed->has_value()) << "nothing indexed a trace file's steps";
}

TEST_F(InMemoryBatchesTest, AWindowHoldsTheOverlappingBatchesAppendedAndNothingIsUnreadable) {
  InMemoryBatches source(batches_, strings_);
  for (int round = 0; round < 2; ++round) {  // the buffer is reused: no events of the last window
    std::vector<int64_t> starts;
    absl::StatusOr<std::string> note = source.WithWindow(25, 35, [&](const EventColumns& w, const StringTable&) {
      for (const KernelEvent& k : w.kernels) starts.push_back(k.start_ns);
    });
    ASSERT_TRUE(note.ok());
    EXPECT_EQ(*note, "");
    EXPECT_THAT(starts, ElementsAre(0, 20, 30, 45));
  }
}

}  // namespace
}  // namespace gpuspy::analysis
