// A trace held in memory as a BatchSource (analysis/in_memory_batches.h): cut as `gpuspy import`
// cuts it, batches selected by the storage index's overlap rule, a step's window appended in
// batch order.
#include "analysis/in_memory_batches.h"

#include <algorithm>
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

// n kernels, 5 ns each, one every 10 ns, correlation ids 1..n.
EventColumns KernelsEvery10Ns(int64_t n) {
  EventColumns all;
  for (int64_t i = 0; i < n; ++i) {
    all.kernels.push_back({});
    all.kernels.back().start_ns = i * 10;
    all.kernels.back().end_ns = i * 10 + 5;
    all.kernels.back().correlation_id = static_cast<uint64_t>(i + 1);
  }
  return all;
}

TEST(InMemoryBatches, ATraceIsCutIntoImportSizedBatchesEachWithItsTimeRange) {
  const EventColumns all = KernelsEvery10Ns(10'000);
  const ImportBatches cut = CutIntoImportBatches(all);
  size_t events = 0;
  for (size_t i = 0; i < cut.size(); ++i) {
    EventColumns batch;
    cut.AppendTo(i, &batch);
    EXPECT_LE(batch.size(), kEventsPerImportBatch);
    EXPECT_EQ(cut.range(i), batch.TimeRange());
    events += batch.size();
  }
  EXPECT_EQ(events, all.size());
  EXPECT_GE(cut.size(), 3u);
}

// The batches are Split's parts, in order, empty ones left out: what `gpuspy import` stores.
TEST(InMemoryBatches, TheBatchesAreWhatSplitCutsCollectivesWithTheirKernels) {
  EventColumns all = KernelsEvery10Ns(9'000);
  for (int64_t i = 999; i < 9'000; i += 1000) {  // each with a kernel of its own
    all.collectives.push_back({});
    all.collectives.back().correlation_id = static_cast<uint64_t>(i + 1);
  }
  for (int64_t i = 0; i < 5; ++i) {  // few API calls: most parts have none
    all.apis.push_back({});
    all.apis.back().start_ns = i * 20'000;
    all.apis.back().end_ns = i * 20'000 + 3;
  }
  all.collectives.push_back({});  // no kernel of its own: apportioned by index
  all.collectives.back().correlation_id = 999'999;
  const std::vector<EventColumns> split = all.Split(all.size() / kEventsPerImportBatch + 1);
  const ImportBatches cut = CutIntoImportBatches(all);
  ASSERT_EQ(cut.size(), split.size());
  size_t collectives = 0;
  for (size_t i = 0; i < cut.size(); ++i) {
    EventColumns batch;
    cut.AppendTo(i, &batch);
    EXPECT_EQ(batch, split[i]) << i;
    EXPECT_EQ(cut.range(i), split[i].TimeRange()) << i;
    for (const CollectiveEvent& c : batch.collectives) {
      if (c.correlation_id == 999'999) continue;
      EXPECT_TRUE(std::any_of(batch.kernels.begin(), batch.kernels.end(),
                              [&](const KernelEvent& k) { return k.correlation_id == c.correlation_id; }));
    }
    collectives += batch.collectives.size();
  }
  EXPECT_EQ(collectives, all.collectives.size());
}

// A trace of no events is one empty batch, as Split(1) leaves it.
TEST(InMemoryBatches, NoEventsIsOneEmptyBatch) {
  const EventColumns none;
  const ImportBatches cut = CutIntoImportBatches(none);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut.range(0), (std::pair<int64_t, int64_t>{0, 0}));
}

class InMemoryBatchesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<EventColumns> parts;
    for (auto spans : {std::vector<std::pair<int64_t, int64_t>>{{0, 10}, {20, 30}},
                       std::vector<std::pair<int64_t, int64_t>>{{30, 40}, {45, 50}},
                       std::vector<std::pair<int64_t, int64_t>>{{60, 70}}}) {
      parts.push_back(Kernels(spans));
    }
    batches_ = ImportBatches::Of(parts);
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
