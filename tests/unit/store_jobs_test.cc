// Deleting processes, renaming jobs and finding imports by content hash (store.h), proved against
// every backend: the embedded store and the PostgreSQL hub store (skipped with the reason when
// PostgreSQL is not installed).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "collector/storage/store.h"
#include "tests/support/store_backends.h"
#include "tests/support/store_fixtures.h"

namespace gpuspy::collector {
namespace {

using gpuspy::testing::StoreBackend;
using gpuspy::testing::TestIdentity;

class StoreJobsTest : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override {
    if (std::string why = factory_.Prepare(); !why.empty()) GTEST_SKIP() << why;
    store_ = Open();
    ASSERT_NE(store_, nullptr);
  }
  std::unique_ptr<Store> Open() {
    absl::StatusOr<std::unique_ptr<Store>> s = factory_.TryOpen();
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }
  // A process of `job` with two batches, a dictionary chunk and a step.
  uint64_t AddProcess(const std::string& key, const std::string& job, const std::string& sha = "") {
    v1::ProcessIdentity id = TestIdentity(key, job);
    id.set_content_sha256(sha);
    const uint64_t p = *store_->UpsertProcess(id, 1);
    for (uint64_t seq : {1, 2}) EXPECT_TRUE(store_->AppendBatch(gpuspy::testing::TestBatch(p, seq, 10, 20, 100, 10)).ok());
    v1::Dictionary defs;
    defs.add_strings()->set_value("kernel");
    EXPECT_TRUE(store_->AppendDictionary(p, defs).ok());
    EXPECT_TRUE(store_->UpsertSteps({{p, 1, 10, 20, "nvtx:ProfilerStep#"}}).ok());
    // An import is listed once its stream closed after its last batch (store.h: CommitImport).
    if (!sha.empty()) {
      EXPECT_TRUE(store_->CommitImport(p).ok());
    }
    return p;
  }
  gpuspy::testing::StoreFactory factory_{GetParam()};
  std::unique_ptr<Store> store_;
};

TEST_P(StoreJobsTest, DeletedProcessesLeaveNothingAndOthersAreUntouched) {
  const uint64_t a = AddProcess("a", "gone");
  const uint64_t b = AddProcess("b", "gone");
  const uint64_t kept = AddProcess("c", "kept");
  absl::StatusOr<uint64_t> deleted = store_->DeleteProcesses({a, b, 9999});
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_EQ(*deleted, 2u);  // the unknown id is skipped
  EXPECT_TRUE(store_->ListProcesses("gone")->empty());
  for (uint64_t p : {a, b}) {
    EXPECT_EQ(store_->GetProcess(p).status().code(), absl::StatusCode::kNotFound);
    EXPECT_TRUE(store_->ReadBatches(p, 0, 0)->empty());
    EXPECT_TRUE(store_->ListSteps(p)->empty());
    EXPECT_EQ(store_->LoadDictionary(p)->strings_size(), 0);
  }
  EXPECT_EQ(store_->ReadBatches(kept, 0, 0)->size(), 2u);
  EXPECT_EQ(store_->ListSteps(kept)->size(), 1u);
  EXPECT_EQ(store_->Stats().batches, 2u);
  // The key is free again: the same process key is a new process, with a new id.
  const uint64_t again = *store_->UpsertProcess(TestIdentity("a", "gone"), 2);
  EXPECT_NE(again, a);
  EXPECT_EQ(store_->GetProcess(again)->batch_count, 0u);
}

TEST_P(StoreJobsTest, RenameMovesEveryProcessAndSurvivesReopen) {
  const uint64_t a = AddProcess("a", "old");
  const uint64_t b = AddProcess("b", "old");
  AddProcess("c", "taken");
  EXPECT_EQ(store_->RenameJob("old", "taken").status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(store_->RenameJob("nope", "new").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ListProcesses("old")->size(), 2u);  // a refused rename changes nothing
  absl::StatusOr<uint64_t> moved = store_->RenameJob("old", "new");
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(*moved, 2u);
  store_.reset();
  store_ = Open();
  ASSERT_NE(store_, nullptr);
  EXPECT_TRUE(store_->ListProcesses("old")->empty());
  absl::StatusOr<std::vector<ProcessRecord>> renamed = store_->ListProcesses("new");
  ASSERT_EQ(renamed->size(), 2u);
  EXPECT_EQ((*renamed)[0].process_id, a);
  EXPECT_EQ((*renamed)[1].process_id, b);
  EXPECT_EQ((*renamed)[0].identity.job_id(), "new");
  EXPECT_EQ((*renamed)[0].batch_count, 2u);
  EXPECT_EQ(store_->ReadBatches(a, 0, 0)->size(), 2u);
}

TEST_P(StoreJobsTest, ImportsAreFoundByTheirContentHash) {
  const std::string sha(64, 'a');
  const uint64_t p = AddProcess("import:a", "j", sha);
  AddProcess("import:b", "j", std::string(64, 'b'));
  AddProcess("live", "j");
  absl::StatusOr<std::vector<ProcessRecord>> found = store_->FindByContentHash(sha);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].process_id, p);
  EXPECT_TRUE(store_->FindByContentHash(std::string(64, 'c'))->empty());
  EXPECT_TRUE(store_->FindByContentHash("")->empty());  // processes that are no import
  ASSERT_TRUE(store_->DeleteProcesses({p}).ok());
  EXPECT_TRUE(store_->FindByContentHash(sha)->empty());
}

TEST_P(StoreJobsTest, AJobsStepPatternIsKeptSetAgainClearedAndFollowsARename) {
  AddProcess("a", "old");
  EXPECT_EQ(*store_->GetJobStepPattern("old"), "");
  ASSERT_TRUE(store_->SetJobStepPattern("old", "train_step_(\\d+)").ok());
  ASSERT_TRUE(store_->SetJobStepPattern("old", "iter_(\\d+)").ok());  // replaced, not added
  EXPECT_EQ(*store_->GetJobStepPattern("other"), "");
  ASSERT_TRUE(store_->RenameJob("old", "new").ok());
  store_.reset();
  store_ = Open();
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(*store_->GetJobStepPattern("old"), "");
  EXPECT_EQ(*store_->GetJobStepPattern("new"), "iter_(\\d+)");
  ASSERT_TRUE(store_->SetJobStepPattern("new", "").ok());
  EXPECT_EQ(*store_->GetJobStepPattern("new"), "");
}

TEST_P(StoreJobsTest, ReplacedStepsAreExactlyTheNewOnesOfThatProcess) {
  const uint64_t a = AddProcess("a", "j");
  const uint64_t b = AddProcess("b", "j");
  ASSERT_TRUE(store_->UpsertSteps({{a, 2, 20, 30, "nvtx:ProfilerStep#"}}).ok());
  ASSERT_TRUE(store_->ReplaceSteps(a, {{a, 7, 11, 12, "nvtx:train_step_(\\d+)"}, {a, 8, 12, 13, "nvtx:train_step_(\\d+)"}}).ok());
  absl::StatusOr<std::vector<StepRecord>> steps = store_->ListSteps(a);
  ASSERT_TRUE(steps.ok()) << steps.status();
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[0], (StepRecord{a, 7, 11, 12, "nvtx:train_step_(\\d+)"}));
  EXPECT_EQ((*steps)[1].number, 8);
  EXPECT_EQ(store_->ListSteps(b)->size(), 1u);  // the other process keeps its own
  ASSERT_TRUE(store_->ReplaceSteps(a, {}).ok());
  EXPECT_TRUE(store_->ListSteps(a)->empty());
}

// Imports are complete or absent (issue 34 item 5): on either store a pending import is listed
// nowhere until committed, is discarded when imported again, and is gone once the store reopens.
// Before migration 005 the PostgreSQL store listed an import from its first batch on.
TEST_P(StoreJobsTest, APendingImportIsListedOnlyOnceCommitted) {
  v1::ProcessIdentity id = TestIdentity("import:aa", "imported");
  id.set_content_sha256("aa");
  const uint64_t p = *store_->UpsertProcess(id, 1);
  ASSERT_TRUE(store_->AppendBatch(gpuspy::testing::TestBatch(p, 1, 10, 20, 100, 10)).ok());
  EXPECT_TRUE(store_->ListProcesses("")->empty());
  EXPECT_TRUE(store_->ListProcesses("imported")->empty());
  EXPECT_TRUE(store_->FindByContentHash("aa")->empty());
  EXPECT_EQ(store_->GetProcess(p)->batch_count, 1u);  // ingest still finds it by id
  ASSERT_TRUE(store_->CommitImport(p).ok());
  EXPECT_EQ(store_->ListProcesses("imported")->size(), 1u);
  EXPECT_EQ(store_->FindByContentHash("aa")->size(), 1u);
  EXPECT_EQ(*store_->DiscardPendingImport("import:aa"), 0u);  // committed: not pending any more
  store_.reset();
  store_ = Open();
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(store_->ListProcesses("imported")->size(), 1u);  // a committed import stays
}

TEST_P(StoreJobsTest, APendingImportIsDiscardedOnRequestAndOnOpen) {
  auto import_of = [&](const std::string& sha) {
    v1::ProcessIdentity id = TestIdentity("import:" + sha, "imported");
    id.set_content_sha256(sha);
    const uint64_t p = *store_->UpsertProcess(id, 1);
    EXPECT_TRUE(store_->AppendBatch(gpuspy::testing::TestBatch(p, 1, 10, 20, 100, 10)).ok());
    v1::Dictionary defs;
    defs.add_strings()->set_value("kernel");
    EXPECT_TRUE(store_->AppendDictionary(p, defs).ok());
    EXPECT_TRUE(store_->UpsertSteps({{p, 1, 10, 20, "nvtx:ProfilerStep#"}}).ok());
    return p;
  };
  const uint64_t a = import_of("aa");
  const uint64_t b = import_of("bb");
  const uint64_t live = AddProcess("live", "j");  // not an import
  EXPECT_EQ(*store_->DiscardPendingImport("import:aa"), 1u);
  EXPECT_EQ(store_->GetProcess(a).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store_->ReadBatches(a, 0, 0)->empty());
  EXPECT_TRUE(store_->ListSteps(a)->empty());
  EXPECT_EQ(store_->ListProcesses("")->size(), 1u);
  store_.reset();  // "bb" is still pending when the store closes
  store_ = Open();
  ASSERT_NE(store_, nullptr);
  const auto all = store_->ListProcesses("");
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->front().process_id, live);
  EXPECT_EQ(store_->GetProcess(b).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store_->ReadBatches(b, 0, 0)->empty());
  EXPECT_TRUE(store_->LoadDictionary(b)->strings().empty());
  EXPECT_EQ(store_->ReadBatches(live, 0, 0)->size(), 2u);
  EXPECT_EQ(store_->Stats().batches, 2u);  // the live process's, nothing of the imports
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreJobsTest,
                         ::testing::Values(StoreBackend::kEmbedded, StoreBackend::kPostgres),
                         gpuspy::testing::StoreBackendName);

}  // namespace
}  // namespace gpuspy::collector
