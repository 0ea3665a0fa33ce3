// A process's stored batches as a BatchSource (collector/query/stored_batches.h): the NVTX steps
// are ingest's index, detected steps are remembered in the cache, a step's events are charged to
// the query's lease while read, and the same trace gives the same steps and reports stored as in
// memory.
#include "collector/query/stored_batches.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <memory>
#include <vector>

#include "analysis/in_memory_batches.h"
#include "analysis/process_analysis.h"
#include "collector/ingest/batch_ingestor.h"
#include "tests/support/query_engine_parts.h"
#include "tests/support/store_rank.h"
#include "tests/support/subprocess.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy::collector {
namespace {

using google::protobuf::util::MessageDifferencer;

class StoredBatchesTest : public ::testing::Test {
 protected:
  // Stores `rank`'s steps through ingest, one batch each, and returns its process record.
  ProcessRecord Store(const synthetic::SyntheticRank& rank) {
    BatchIngestor ingestor(parts_.store.get(), parts_.dictionaries.get(), &parts_.counters,
                           analysis::StepSegmenter());
    const uint64_t process = testing::StoreRank(ingestor, rank);
    return *parts_.store->GetProcess(process);
  }
  // The same steps as the batches of a trace in memory.
  static analysis::ImportBatches AsBatches(const synthetic::SyntheticRank& rank) {
    return analysis::ImportBatches::Of(rank.steps);
  }
  static synthetic::SyntheticRank Rank(bool nvtx_steps) {
    synthetic::SyntheticOptions o;
    o.scenario = synthetic::Scenario::kSyncStall;
    o.steps = 10;
    o.nvtx_steps = nvtx_steps;
    o.job_id = nvtx_steps ? "nvtx" : "period";
    synthetic::SyntheticRank rank = synthetic::GenerateRank(o, 0);
    rank.identity.set_process_key(o.job_id + "-rank0");  // one process per job in the store
    return rank;
  }

  testing::TempDir dir_;
  testing::QueryEngineParts parts_{dir_.path()};
  EventReader reader_{parts_.store.get(), parts_.dictionaries.get()};
  AnalysisCache cache_;
};

TEST_F(StoredBatchesTest, TheNvtxStepsAreTheOnesIngestIndexedByTheSameRule) {
  const synthetic::SyntheticRank rank = Rank(/*nvtx_steps=*/true);
  const ProcessRecord p = Store(rank);
  StoredBatches stored(parts_.store.get(), &reader_, p, {});
  absl::StatusOr<std::optional<std::vector<analysis::StepWindow>>> indexed = stored.IndexedNvtxSteps();
  ASSERT_TRUE(indexed.ok());
  ASSERT_TRUE(indexed->has_value());
  const analysis::ImportBatches batches = AsBatches(rank);
  analysis::InMemoryBatches memory(batches, rank.strings);
  absl::StatusOr<std::vector<analysis::StepWindow>> found = analysis::FindSteps(memory, {});
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->size(), rank.steps.size());
  absl::StatusOr<std::vector<analysis::StepWindow>> from_store = analysis::FindSteps(stored, {});
  ASSERT_TRUE(from_store.ok());
  EXPECT_EQ(*from_store, *found);
}

TEST_F(StoredBatchesTest, StepsDetectedWithoutNvtxAreRememberedUntilNewBatchesArrive) {
  const synthetic::SyntheticRank rank = Rank(/*nvtx_steps=*/false);
  const ProcessRecord p = Store(rank);
  StoredBatches stored(parts_.store.get(), &reader_, p, {.cache = &cache_});
  EXPECT_FALSE(stored.RememberedDetection().has_value());
  absl::StatusOr<std::vector<analysis::StepWindow>> steps = analysis::FindSteps(stored, {});
  ASSERT_TRUE(steps.ok());
  ASSERT_FALSE(steps->empty());
  EXPECT_EQ((*steps)[0].source.rfind("period:", 0), 0u) << (*steps)[0].source;
  std::optional<std::vector<analysis::StepWindow>> kept = stored.RememberedDetection();
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(*kept, *steps);
  ProcessRecord grown = p;
  ++grown.batch_count;
  ++grown.max_sequence;
  StoredBatches later(parts_.store.get(), &reader_, grown, {.cache = &cache_});
  EXPECT_FALSE(later.RememberedDetection().has_value());
}

TEST_F(StoredBatchesTest, AStoppedReadOfEveryBatchEndsCancelled) {
  const ProcessRecord p = Store(Rank(/*nvtx_steps=*/false));
  std::atomic<bool> cancelled{true};
  StoredBatches stored(parts_.store.get(), &reader_, p, {.cancelled = &cancelled});
  int visited = 0;
  absl::Status st = stored.ForEachBatch([&](const EventColumns&, const StringTable&) { ++visited; });
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(visited, 0);
}

TEST_F(StoredBatchesTest, AStepsEventsAreChargedWhileReadAndGivenBackAfter) {
  const ProcessRecord p = Store(Rank(/*nvtx_steps=*/true));
  AnalysisBudget budget(&cache_);
  AnalysisBudget::Lease lease(&budget);
  StoredBatches stored(parts_.store.get(), &reader_, p, {.lease = &lease});
  uint64_t charged_while_read = 0;
  size_t events = 0;
  absl::StatusOr<std::string> note = stored.WithWindow(0, std::numeric_limits<int64_t>::max(),
                                                       [&](const EventColumns& e, const StringTable&) {
                                                         charged_while_read = lease.bytes();
                                                         events = e.size();
                                                       });
  ASSERT_TRUE(note.ok());
  EXPECT_EQ(*note, "");
  EXPECT_GT(events, 0u);
  EXPECT_EQ(charged_while_read, events * kWindowBytesPerEvent);
  EXPECT_EQ(lease.bytes(), 0u);
  // Another query holds memory and the budget is spent: this one's events do not fit.
  AnalysisBudget::Lease other(&budget);
  ASSERT_TRUE(other.Add(1).ok());
  budget.set_budget(1);
  EXPECT_EQ(stored.WithWindow(0, std::numeric_limits<int64_t>::max(),
                              [](const EventColumns&, const StringTable&) {})
                .status()
                .code(),
            absl::StatusCode::kResourceExhausted);
}

TEST_F(StoredBatchesTest, TheSameBatchesGiveTheSameReportsStoredAsInMemory) {
  for (bool nvtx : {true, false}) {
    const synthetic::SyntheticRank rank = Rank(nvtx);
    const ProcessRecord p = Store(rank);
    StoredBatches stored(parts_.store.get(), &reader_, p, {});
    absl::StatusOr<analysis::ProcessAnalysis> from_store =
        analysis::AnalyzeProcess(stored, {}, p.process_id);
    ASSERT_TRUE(from_store.ok()) << from_store.status();
    const analysis::ImportBatches batches = AsBatches(rank);
    analysis::InMemoryBatches memory(batches, rank.strings);
    absl::StatusOr<analysis::ProcessAnalysis> in_memory =
        analysis::AnalyzeProcess(memory, {}, p.process_id);
    ASSERT_TRUE(in_memory.ok());
    ASSERT_EQ(from_store->steps.size(), in_memory->steps.size());
    ASSERT_FALSE(in_memory->steps.empty());
    for (size_t i = 0; i < in_memory->steps.size(); ++i) {
      EXPECT_TRUE(MessageDifferencer::Equals(from_store->steps[i].report, in_memory->steps[i].report))
          << (nvtx ? "nvtx" : "period") << " step " << i;
      EXPECT_EQ(from_store->steps[i].kernel_names, in_memory->steps[i].kernel_names);
    }
  }
}

}  // namespace
}  // namespace gpuspy::collector
