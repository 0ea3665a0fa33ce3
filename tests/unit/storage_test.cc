// The embedded store: round trips, duplicates, restart, retention, damage, crash tails, full disk.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "collector/storage/store.h"
#include "tests/support/store_fixtures.h"
#include "tests/support/subprocess.h"

namespace gpuspy::collector {
namespace {

namespace fs = std::filesystem;

using gpuspy::testing::TestIdentity;

StoredBatch Batch(uint64_t process, uint64_t seq, int64_t min_ns, int64_t max_ns,
                  size_t payload_bytes = 100) {
  return gpuspy::testing::TestBatch(process, seq, min_ns, max_ns, payload_bytes, 10);
}

class StorageTest : public ::testing::Test {
 protected:
  std::unique_ptr<Store> Open(uint64_t segment_bytes = 1 << 20) {
    EmbeddedStoreOptions o;
    o.data_dir = dir_.path() + "/data";
    o.segment_max_bytes = segment_bytes;
    absl::StatusOr<std::unique_ptr<Store>> s = OpenEmbeddedStore(o);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::vector<fs::path> Segments() {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_.path() + "/data/segments")) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }
  testing::TempDir dir_;
};

TEST_F(StorageTest, BatchesRoundTripAndUpdateProcessCounters) {
  auto store = Open();
  auto id = store->UpsertProcess(TestIdentity("p1", "job"), 100);
  ASSERT_TRUE(id.ok());
  StoredBatch b1 = Batch(*id, 1, 1000, 2000);
  b1.loss.cupti_dropped_records = 5;
  ASSERT_TRUE(store->AppendBatch(b1).ok());
  ASSERT_TRUE(store->AppendBatch(Batch(*id, 2, 2000, 3000)).ok());
  auto batches = store->ReadBatches(*id, 0, 0);
  ASSERT_TRUE(batches.ok());
  ASSERT_EQ(batches->size(), 2u);
  EXPECT_EQ((*batches)[0].payload, b1.payload);
  EXPECT_EQ((*batches)[1].sequence, 2u);
  auto p = store->GetProcess(*id);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->event_count, 20u);
  EXPECT_EQ(p->batch_count, 2u);
  EXPECT_EQ(p->max_sequence, 2u);
  EXPECT_EQ(p->loss.cupti_dropped_records, 5u);
  EXPECT_EQ(p->sequence_gaps(), 0u);
  EXPECT_EQ(p->identity.job_id(), "job");
}

TEST_F(StorageTest, DuplicateSequenceIsAlreadyExistsAndChangesNothing) {
  auto store = Open();
  auto id = store->UpsertProcess(TestIdentity("p1", "job"), 100);
  ASSERT_TRUE(store->AppendBatch(Batch(*id, 1, 0, 10)).ok());
  absl::Status st = store->AppendBatch(Batch(*id, 1, 0, 10));
  EXPECT_EQ(st.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(store->GetProcess(*id)->batch_count, 1u);
  EXPECT_EQ(store->ReadBatches(*id, 0, 0)->size(), 1u);
}

TEST_F(StorageTest, SameProcessKeyIsTheSameProcess) {
  auto store = Open();
  auto a = store->UpsertProcess(TestIdentity("p1", "job"), 100);
  auto b = store->UpsertProcess(TestIdentity("p2", "job"), 100);
  auto again = store->UpsertProcess(TestIdentity("p1", "job"), 200);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(*a, *again);
  ASSERT_TRUE(store->UpsertProcess(TestIdentity("p3", "other"), 100).ok());
  EXPECT_EQ(store->ListProcesses("job")->size(), 2u);
  EXPECT_EQ(store->ListProcesses("other")->size(), 1u);
  EXPECT_EQ(store->ListProcesses("")->size(), 3u);
  EXPECT_EQ(store->GetProcess(9999).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StorageTest, TimeWindowSelectsOverlappingBatches) {
  auto store = Open();
  auto id = store->UpsertProcess(TestIdentity("p1", "job"), 100);
  ASSERT_TRUE(store->AppendBatch(Batch(*id, 1, 0, 100)).ok());
  ASSERT_TRUE(store->AppendBatch(Batch(*id, 2, 100, 200)).ok());
  ASSERT_TRUE(store->AppendBatch(Batch(*id, 3, 200, 300)).ok());
  auto mid = store->ReadBatches(*id, 150, 210);
  ASSERT_EQ(mid->size(), 2u);
  EXPECT_EQ((*mid)[0].sequence, 2u);
  EXPECT_EQ((*mid)[1].sequence, 3u);
  EXPECT_TRUE(store->ReadBatches(*id, 400, 500)->empty());
}

TEST_F(StorageTest, EverythingSurvivesReopen) {
  uint64_t id = 0;
  {
    auto store = Open();
    id = *store->UpsertProcess(TestIdentity("p1", "job"), 100);
    v1::Dictionary d;
    auto* s = d.add_strings();
    s->set_ref(1);
    s->set_value("cudaLaunchKernel");
    ASSERT_TRUE(store->AppendDictionary(id, d).ok());
    d.clear_strings();
    s = d.add_strings();
    s->set_ref(2);
    s->set_value("gemm");
    ASSERT_TRUE(store->AppendDictionary(id, d).ok());
    for (uint64_t seq = 1; seq <= 20; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq + 1)).ok());
    ASSERT_TRUE(store->UpsertSteps({{id, 3, 10, 20, "nvtx"}, {id, 4, 20, 30, "nvtx"}}).ok());
    ASSERT_TRUE(store->Flush().ok());
  }
  auto store = Open();
  EXPECT_EQ(store->ReadBatches(id, 0, 0)->size(), 20u);
  auto dict = store->LoadDictionary(id);
  ASSERT_TRUE(dict.ok());
  ASSERT_EQ(dict->strings_size(), 2);
  EXPECT_EQ(dict->strings(1).value(), "gemm");
  auto steps = store->ListSteps(id);
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[1], (StepRecord{id, 4, 20, 30, "nvtx"}));
  // And the reopened store keeps appending after what is there.
  EXPECT_TRUE(store->AppendBatch(Batch(id, 21, 21, 22)).ok());
  EXPECT_EQ(store->AppendBatch(Batch(id, 5, 5, 6)).code(), absl::StatusCode::kAlreadyExists);
}

TEST_F(StorageTest, UpsertStepsReplacesByNumber) {
  auto store = Open();
  ASSERT_TRUE(store->UpsertSteps({{1, 7, 0, 10, "nvtx"}}).ok());
  ASSERT_TRUE(store->UpsertSteps({{1, 7, 0, 15, "nvtx"}}).ok());
  auto steps = store->ListSteps(1);
  ASSERT_EQ(steps->size(), 1u);
  EXPECT_EQ((*steps)[0].end_ns, 15);
}

TEST_F(StorageTest, SegmentsRollAtTheirSizeLimit) {
  auto store = Open(/*segment_bytes=*/4096);
  auto id = store->UpsertProcess(TestIdentity("p1", "job"), 100);
  for (uint64_t seq = 1; seq <= 40; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(*id, seq, seq, seq, 900)).ok());
  EXPECT_GE(Segments().size(), 9u);
  for (const auto& seg : Segments()) EXPECT_LE(fs::file_size(seg), 4096u);
  EXPECT_EQ(store->ReadBatches(*id, 0, 0)->size(), 40u);
}

TEST_F(StorageTest, RetentionByBytesEvictsOldestAndKeepsNewest) {
  auto store = Open(/*segment_bytes=*/4096);
  auto id = store->UpsertProcess(TestIdentity("p1", "job"), 100);
  for (uint64_t seq = 1; seq <= 40; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(*id, seq, seq, seq, 900)).ok());
  auto evicted = store->EnforceRetention({/*max_bytes=*/12000, 0}, 0);
  ASSERT_TRUE(evicted.ok());
  EXPECT_GT(*evicted, 0u);
  auto left = store->ReadBatches(*id, 0, 0);
  ASSERT_FALSE(left->empty());
  EXPECT_EQ(left->back().sequence, 40u);  // the newest stays
  EXPECT_GT(left->front().sequence, 1u);  // the oldest went
  uint64_t bytes = 0;
  for (const auto& seg : Segments()) bytes += fs::file_size(seg);
  EXPECT_LE(bytes, 12000u);
  EXPECT_EQ(store->Stats().segments_evicted, *evicted);
  // Counters describe what was ever stored; eviction is not a gap.
  EXPECT_EQ(store->GetProcess(*id)->sequence_gaps(), 0u);
}

TEST_F(StorageTest, RetentionByAgeSealsAnIdleActiveSegment) {
  auto store = Open();
  auto id = store->UpsertProcess(TestIdentity("p1", "job"), 100);
  ASSERT_TRUE(store->AppendBatch(Batch(*id, 1, 1, 2)).ok());
  const int64_t far_future = absl::ToUnixNanos(absl::Now()) + 3600LL * 1'000'000'000;
  auto evicted = store->EnforceRetention({0, /*max_age_ns=*/1'000'000'000}, far_future);
  ASSERT_TRUE(evicted.ok());
  EXPECT_EQ(*evicted, 1u);
  EXPECT_TRUE(store->ReadBatches(*id, 0, 0)->empty());
  EXPECT_TRUE(store->AppendBatch(Batch(*id, 2, 2, 3)).ok());  // writing goes on
  EXPECT_EQ(store->ReadBatches(*id, 0, 0)->size(), 1u);
}

TEST_F(StorageTest, CorruptRecordIsSkippedAndCountedOthersStayReadable) {
  uint64_t id = 0;
  {
    auto store = Open();
    id = *store->UpsertProcess(TestIdentity("p1", "job"), 100);
    for (uint64_t seq = 1; seq <= 3; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq)).ok());
  }
  {
    // Flip a payload byte of the second record (32-byte header + 100-byte payload each).
    std::fstream f(Segments().front(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(132 + 32 + 50);
    f.put('Z');
  }
  auto store = Open();
  auto batches = store->ReadBatches(id, 0, 0);
  ASSERT_TRUE(batches.ok());
  ASSERT_EQ(batches->size(), 2u);
  EXPECT_EQ((*batches)[0].sequence, 1u);
  EXPECT_EQ((*batches)[1].sequence, 3u);
  EXPECT_EQ(store->Stats().corrupt_records, 1u);
}

TEST_F(StorageTest, UnacknowledgedTailIsCutOnReopen) {
  uint64_t id = 0;
  {
    auto store = Open();
    id = *store->UpsertProcess(TestIdentity("p1", "job"), 100);
    for (uint64_t seq = 1; seq <= 3; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq)).ok());
  }
  const auto seg = Segments().front();
  const auto indexed = fs::file_size(seg);
  {
    // A crash mid-append: a partial record after the last indexed one.
    std::ofstream f(seg, std::ios::app | std::ios::binary);
    f << std::string(57, 'x');
  }
  auto store = Open();
  EXPECT_EQ(fs::file_size(seg), indexed);
  EXPECT_EQ(store->ReadBatches(id, 0, 0)->size(), 3u);
  ASSERT_TRUE(store->AppendBatch(Batch(id, 4, 4, 4)).ok());
  EXPECT_EQ(store->ReadBatches(id, 0, 0)->size(), 4u);
  EXPECT_EQ(store->Stats().corrupt_records, 0u);
}

TEST_F(StorageTest, MissingSegmentFileDropsOnlyItsBatches) {
  uint64_t id = 0;
  {
    auto store = Open(/*segment_bytes=*/1024);
    id = *store->UpsertProcess(TestIdentity("p1", "job"), 100);
    for (uint64_t seq = 1; seq <= 10; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq, 400)).ok());
  }
  fs::remove(Segments().front());
  auto store = Open(1024);
  auto left = store->ReadBatches(id, 0, 0);
  ASSERT_TRUE(left.ok());
  EXPECT_FALSE(left->empty());
  EXPECT_LT(left->size(), 10u);
  EXPECT_EQ(left->back().sequence, 10u);
}

// Runs in a child process: RLIMIT_FSIZE makes the segment write fail with EFBIG, exactly like a
// full disk, without touching the test process's own limits.
TEST_F(StorageTest, FullDiskRefusesTheBatchAndKeepsEverythingElse) {
  auto store = Open();
  auto id = store->UpsertProcess(TestIdentity("p1", "job"), 100);
  ASSERT_TRUE(store->AppendBatch(Batch(*id, 1, 1, 2, 1000)).ok());
  const uint64_t seg_size = fs::file_size(Segments().front());
  const pid_t child = fork();
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim{seg_size + 100, RLIM_INFINITY};
    setrlimit(RLIMIT_FSIZE, &lim);
    absl::Status st = store->AppendBatch(Batch(*id, 2, 2, 3, 5000));
    if (st.code() != absl::StatusCode::kResourceExhausted) _exit(10);
    if (st.message().find("File too large") == std::string_view::npos) _exit(11);
    // Nothing partial was left behind, and earlier data reads back.
    if (fs::file_size(Segments().front()) != seg_size) _exit(12);
    auto all = store->ReadBatches(*id, 0, 0);
    if (!all.ok() || all->size() != 1) _exit(13);
    // Space comes back: appends work again.
    lim.rlim_cur = RLIM_INFINITY;
    setrlimit(RLIMIT_FSIZE, &lim);
    if (!store->AppendBatch(Batch(*id, 3, 3, 4, 5000)).ok()) _exit(14);
    if (store->Stats().write_errors != 1) _exit(15);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(StorageTest, ConcurrentAppendsAndReadsStayConsistent) {
  auto store = Open(/*segment_bytes=*/64 * 1024);
  std::vector<uint64_t> ids;
  for (int p = 0; p < 4; ++p) ids.push_back(*store->UpsertProcess(TestIdentity("p" + std::to_string(p), "job"), 1));
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) {
      for (uint64_t id : ids) {
        auto b = store->ReadBatches(id, 0, 0);
        ASSERT_TRUE(b.ok());
        for (size_t i = 1; i < b->size(); ++i) ASSERT_LT((*b)[i - 1].sequence, (*b)[i].sequence);
      }
    }
  });
  std::vector<std::thread> writers;
  for (uint64_t id : ids) {
    writers.emplace_back([&, id] {
      for (uint64_t seq = 1; seq <= 200; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq)).ok());
    });
  }
  for (auto& w : writers) w.join();
  done = true;
  reader.join();
  for (uint64_t id : ids) {
    EXPECT_EQ(store->ReadBatches(id, 0, 0)->size(), 200u);
    EXPECT_EQ(store->GetProcess(id)->batch_count, 200u);
  }
}

}  // namespace
}  // namespace gpuspy::collector
