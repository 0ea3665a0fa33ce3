// The device memory totals ingest keeps per process (collector/live/memory_totals.h) go with the
// process's data: when its job is deleted, and in the retention round once the store holds no
// event of it. A connected process stays.
#include "collector/live/forget_gone_processes.h"

#include <gtest/gtest.h>

#include "collector/ingest/batch_ingestor.h"
#include "collector/query/query_engine.h"
#include "collector/storage/data_versions.h"
#include "tests/support/query_engine_parts.h"
#include "tests/support/store_rank.h"
#include "tests/support/subprocess.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy::collector {
namespace {

constexpr int64_t kLongAfter = int64_t{1} << 62;

class ForgetGoneProcesses : public ::testing::Test {
 protected:
  ForgetGoneProcesses() : parts_(dir_.path()) { ingestor_.set_memory_totals(&totals_); }

  // A leaking rank of `job` (memory events in every step), stored whole; its process id.
  uint64_t StoreLeakyRank(const std::string& job) {
    synthetic::SyntheticOptions so;
    so.scenario = synthetic::Scenario::kMemoryLeak;
    so.steps = 4;
    so.job_id = job;
    synthetic::SyntheticRank rank = synthetic::GenerateRank(so, 0);
    return testing::StoreRank(ingestor_, rank);
  }

  testing::TempDir dir_;
  testing::QueryEngineParts parts_;
  DataVersions versions_;
  MemoryTotals totals_;
  BatchIngestor ingestor_{parts_.store.get(), parts_.dictionaries.get(), &parts_.counters,
                          analysis::StepSegmenter(), &versions_};
};

TEST_F(ForgetGoneProcesses, DeletingAJobForgetsItsProcessesTotalsAndNoOthers) {
  const uint64_t gone = StoreLeakyRank("gone");
  const uint64_t kept = StoreLeakyRank("kept");
  ASSERT_TRUE(totals_.Before(gone, kLongAfter).has_value());
  const auto engine = parts_.Engine(&versions_);
  engine->set_memory_totals(&totals_);
  v1::DeleteJobRequest del;
  del.set_job_id("gone");
  ASSERT_TRUE(engine->admin()->DeleteJob(del).ok());
  EXPECT_FALSE(totals_.Before(gone, kLongAfter).has_value());
  EXPECT_TRUE(totals_.Before(kept, kLongAfter).has_value());
  EXPECT_EQ(totals_.process_count(), 1u);
}

TEST_F(ForgetGoneProcesses, TheSweepForgetsProcessesTheStoreNoLongerHoldsButKeepsConnectedOnes) {
  const uint64_t evicted = StoreLeakyRank("evicted");
  const uint64_t stored = StoreLeakyRank("stored");
  const uint64_t connected = StoreLeakyRank("connected");
  auto push = [](const v1::ServerMessage&) { return true; };
  const v1::ProcessIdentity identity = parts_.store->GetProcess(connected)->identity;
  parts_.connections.Opened(connected, identity, v1::CaptureMode{}, push, 1);
  // Nothing gone yet: the sweep keeps all three.
  EXPECT_EQ(ForgetMemoryTotalsOfGoneProcesses(*parts_.store, parts_.connections, totals_), 0u);
  EXPECT_EQ(totals_.process_count(), 3u);
  // The store drops two of them (as retention or a delete behind the admin's back would); the
  // connected one stays, its next batches may need the totals.
  ASSERT_TRUE(parts_.store->DeleteProcesses({evicted, connected}).ok());
  EXPECT_EQ(ForgetMemoryTotalsOfGoneProcesses(*parts_.store, parts_.connections, totals_), 1u);
  EXPECT_FALSE(totals_.Before(evicted, kLongAfter).has_value());
  EXPECT_TRUE(totals_.Before(stored, kLongAfter).has_value());
  EXPECT_TRUE(totals_.Before(connected, kLongAfter).has_value());
}

}  // namespace
}  // namespace gpuspy::collector
