// The Store interface (store.h), proved against every backend: the embedded store and the
// PostgreSQL hub store (a throwaway server, a fresh database per test; skipped with the reason
// when PostgreSQL is not installed). Round trips, duplicates, time windows, restart, steps,
// dictionaries, retention by size and age, counters, stats and concurrency.
// Backend-specific behaviour lives in embedded_store_test.cc and postgres_store_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "absl/time/clock.h"
#include "collector/storage/store.h"
#include "tests/support/store_backends.h"
#include "tests/support/store_fixtures.h"

namespace gpuspy::collector {
namespace {

using gpuspy::testing::StoreBackend;
using gpuspy::testing::TestIdentity;

int64_t NowNs() { return absl::ToUnixNanos(absl::Now()); }

StoredBatch Batch(uint64_t process, uint64_t seq, int64_t min_ns, int64_t max_ns,
                  size_t payload_bytes = 100) {
  return gpuspy::testing::TestBatch(process, seq, min_ns, max_ns, payload_bytes, 10);
}

std::vector<uint64_t> Sequences(const std::vector<StoredBatch>& batches) {
  std::vector<uint64_t> out;
  for (const StoredBatch& b : batches) out.push_back(b.sequence);
  return out;
}

class StorageTest : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override {
    if (std::string why = factory_.Prepare(); !why.empty()) GTEST_SKIP() << why;
  }
  std::unique_ptr<Store> Open(uint64_t segment_bytes = 1 << 20) {
    absl::StatusOr<std::unique_ptr<Store>> s = factory_.TryOpen(segment_bytes);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }
  gpuspy::testing::StoreFactory factory_{GetParam()};
};

TEST_P(StorageTest, BatchesRoundTripAndUpdateProcessCounters) {
  auto store = Open();
  auto id = store->UpsertProcess(TestIdentity("p1", "job"), 100);
  ASSERT_TRUE(id.ok()) << id.status();
  StoredBatch b1 = Batch(*id, 1, 1000, 2000);
  b1.loss.cupti_dropped_records = 5;
  ASSERT_TRUE(store->AppendBatch(b1).ok());
  ASSERT_TRUE(store->AppendBatch(Batch(*id, 2, 2000, 3000)).ok());
  auto batches = store->ReadBatches(*id, 0, 0);
  ASSERT_TRUE(batches.ok()) << batches.status();
  ASSERT_EQ(batches->size(), 2u);
  EXPECT_EQ((*batches)[0].payload, b1.payload);
  EXPECT_EQ((*batches)[0].min_ns, 1000);
  EXPECT_EQ((*batches)[0].max_ns, 2000);
  EXPECT_EQ((*batches)[0].event_count, 10u);
  EXPECT_EQ((*batches)[0].process_id, *id);
  EXPECT_EQ((*batches)[1].sequence, 2u);
  auto p = store->GetProcess(*id);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->event_count, 20u);
  EXPECT_EQ(p->batch_count, 2u);
  EXPECT_EQ(p->max_sequence, 2u);
  EXPECT_EQ(p->loss.cupti_dropped_records, 5u);
  EXPECT_EQ(p->sequence_gaps(), 0u);
  EXPECT_EQ(p->identity.job_id(), "job");
  EXPECT_EQ(p->first_seen_unix_ns, 100);
}

TEST_P(StorageTest, PayloadBytesComeBackExactly) {
  auto store = Open(/*segment_bytes=*/64 << 20);
  auto id = *store->UpsertProcess(TestIdentity("p1", "job"), 100);
  std::string every_byte;
  for (int i = 0; i < 4096; ++i) every_byte.push_back(static_cast<char>(i % 256));  // NULs too
  StoredBatch small = Batch(id, 1, 1, 2);
  small.payload = every_byte;
  StoredBatch empty = Batch(id, 2, 2, 3);
  empty.payload.clear();
  StoredBatch large = Batch(id, 3, 3, 4);
  large.payload.clear();
  for (uint32_t i = 0; i < (4u << 20); ++i) large.payload.push_back(static_cast<char>((i * 7919u) >> 3));
  for (const StoredBatch* b : {&small, &empty, &large}) ASSERT_TRUE(store->AppendBatch(*b).ok());
  auto all = store->ReadBatches(id, 0, 0);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].payload, small.payload);
  EXPECT_EQ((*all)[1].payload, "");
  EXPECT_EQ((*all)[2].payload.size(), large.payload.size());
  EXPECT_TRUE((*all)[2].payload == large.payload);
}

// Real batches compress (both backends zstd them at rest); what comes back is the wire form.
TEST_P(StorageTest, CompressiblePayloadsRoundTripAndTakeLessRoomAtRest) {
  auto store = Open();
  auto id = *store->UpsertProcess(TestIdentity("p", "j"), 1);
  std::vector<std::string> payloads;
  for (uint64_t seq = 1; seq <= 16; ++seq) {
    std::string text;
    while (text.size() < (64u << 10)) text += "ncclDevKernel_AllReduce_Sum_f32 step " + std::to_string(seq) + " ";
    payloads.push_back(text);
    StoredBatch b = Batch(id, seq, 1, 2);
    b.payload = text;
    ASSERT_TRUE(store->AppendBatch(b).ok());
  }
  auto all = store->ReadBatches(id, 0, 0);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), payloads.size());
  for (size_t i = 0; i < payloads.size(); ++i) EXPECT_TRUE((*all)[i].payload == payloads[i]) << i;
  EXPECT_LT(factory_.SegmentBytes(), 16u * (64u << 10) / 4);
  EXPECT_EQ(store->Stats().corrupt_records, 0u);
}

TEST_P(StorageTest, DuplicateSequenceIsAlreadyExistsAndChangesNothing) {
  auto store = Open();
  auto id = store->UpsertProcess(TestIdentity("p1", "job"), 100);
  ASSERT_TRUE(store->AppendBatch(Batch(*id, 1, 0, 10)).ok());
  absl::Status st = store->AppendBatch(Batch(*id, 1, 0, 10));
  EXPECT_EQ(st.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(store->GetProcess(*id)->batch_count, 1u);
  EXPECT_EQ(store->GetProcess(*id)->event_count, 10u);
  EXPECT_EQ(store->ReadBatches(*id, 0, 0)->size(), 1u);
}

// The same batch retried from several streams at once (a producer reconnecting while its first
// stream is still draining): exactly one copy is stored.
TEST_P(StorageTest, ConcurrentDuplicatesAreStoredOnce) {
  auto store = Open();
  auto id = *store->UpsertProcess(TestIdentity("p1", "job"), 100);
  ASSERT_TRUE(store->AppendBatch(Batch(id, 5, 5, 6)).ok());
  std::atomic<int> stored{0}, duplicates{0}, other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      for (uint64_t seq : {3, 4, 5, 6, 7}) {
        absl::Status st = store->AppendBatch(Batch(id, seq, 1, 2));
        if (st.ok()) {
          ++stored;
        } else if (absl::IsAlreadyExists(st)) {
          ++duplicates;
        } else {
          ++other;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(stored.load(), 4);  // 3, 4, 6, 7 once each; 5 was there
  EXPECT_EQ(duplicates.load(), 6 * 5 - 4);
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(Sequences(*store->ReadBatches(id, 0, 0)), (std::vector<uint64_t>{3, 4, 5, 6, 7}));
  EXPECT_EQ(store->GetProcess(id)->batch_count, 5u);
}

TEST_P(StorageTest, BatchForUnknownProcessIsNotFoundAndWritesNothing) {
  auto store = Open();
  EXPECT_EQ(store->AppendBatch(Batch(42, 1, 1, 1)).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->Stats().batches, 0u);
  EXPECT_EQ(store->Stats().write_errors, 0u);
  EXPECT_TRUE(store->ReadBatches(42, 0, 0)->empty());
}

TEST_P(StorageTest, SameProcessKeyIsTheSameProcess) {
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
  // Hello again refreshes last_seen and keeps first_seen.
  auto p = store->GetProcess(*a);
  EXPECT_EQ(p->first_seen_unix_ns, 100);
  EXPECT_EQ(p->last_seen_unix_ns, 200);
}

TEST_P(StorageTest, ProcessesAreListedInIdOrderAndMoveWithTheirJob) {
  auto store = Open();
  std::vector<uint64_t> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(*store->UpsertProcess(TestIdentity("p" + std::to_string(i), i % 2 ? "odd" : "even"), 1));
  }
  auto all = store->ListProcesses("");
  ASSERT_EQ(all->size(), 5u);
  for (size_t i = 1; i < all->size(); ++i) EXPECT_LT((*all)[i - 1].process_id, (*all)[i].process_id);
  auto even = store->ListProcesses("even");
  ASSERT_EQ(even->size(), 3u);
  EXPECT_EQ((*even)[0].process_id, ids[0]);
  EXPECT_EQ((*even)[2].process_id, ids[4]);
  // A process that says hello with another job id now belongs to that job.
  ASSERT_EQ(*store->UpsertProcess(TestIdentity("p0", "odd"), 2), ids[0]);
  EXPECT_EQ(store->ListProcesses("even")->size(), 2u);
  EXPECT_EQ(store->ListProcesses("odd")->size(), 3u);
  EXPECT_TRUE(store->ListProcesses("none")->empty());
  // Identity strings are stored as given (non-ASCII included).
  v1::ProcessIdentity unicode = TestIdentity("p-\u00e9\u4e2d", "job-\u00fc");
  auto u = *store->UpsertProcess(unicode, 3);
  EXPECT_EQ(store->GetProcess(u)->identity.process_key(), "p-\u00e9\u4e2d");
  EXPECT_EQ(store->ListProcesses("job-\u00fc")->size(), 1u);
}

TEST_P(StorageTest, TimeWindowSelectsOverlappingBatches) {
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

TEST_P(StorageTest, TimeWindowEdges) {
  auto store = Open();
  auto id = *store->UpsertProcess(TestIdentity("p", "j"), 1);
  ASSERT_TRUE(store->AppendBatch(Batch(id, 1, 100, 200)).ok());
  ASSERT_TRUE(store->AppendBatch(Batch(id, 2, 300, 400)).ok());
  // Overlap with [from, to): max_ns >= from and min_ns < to.
  EXPECT_EQ(Sequences(*store->ReadBatches(id, 200, 300)), (std::vector<uint64_t>{1}));
  EXPECT_EQ(Sequences(*store->ReadBatches(id, 200, 301)), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(Sequences(*store->ReadBatches(id, 201, 300)), (std::vector<uint64_t>{}));
  EXPECT_EQ(Sequences(*store->ReadBatches(id, 50, 100)), (std::vector<uint64_t>{}));
  EXPECT_EQ(Sequences(*store->ReadBatches(id, 50, 101)), (std::vector<uint64_t>{1}));
  EXPECT_EQ(Sequences(*store->ReadBatches(id, 150, 160)), (std::vector<uint64_t>{1}));  // inside
  EXPECT_EQ(Sequences(*store->ReadBatches(id, 0, 0)), (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(store->ReadBatches(id + 1, 0, 0)->empty());  // another process has nothing
}

TEST_P(StorageTest, BatchesComeBackBySequenceWhateverTheArrivalOrder) {
  auto store = Open(/*segment_bytes=*/2048);
  auto id = *store->UpsertProcess(TestIdentity("p", "j"), 1);
  for (uint64_t seq : {4, 1, 3, 9, 2, 7}) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, 10, 20, 600)).ok());
  EXPECT_EQ(Sequences(*store->ReadBatches(id, 0, 0)), (std::vector<uint64_t>{1, 2, 3, 4, 7, 9}));
  EXPECT_EQ(Sequences(*store->ReadBatches(id, 15, 16)), (std::vector<uint64_t>{1, 2, 3, 4, 7, 9}));
  auto p = store->GetProcess(id);
  EXPECT_EQ(p->max_sequence, 9u);
  EXPECT_EQ(p->sequence_gaps(), 3u);  // 5, 6, 8
}

TEST_P(StorageTest, EverythingSurvivesReopen) {
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
  EXPECT_EQ(dict->strings(0).value(), "cudaLaunchKernel");
  EXPECT_EQ(dict->strings(1).value(), "gemm");
  auto steps = store->ListSteps(id);
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[1], (StepRecord{id, 4, 20, 30, "nvtx"}));
  EXPECT_EQ(store->GetProcess(id)->batch_count, 20u);
  // And the reopened store keeps appending after what is there.
  EXPECT_TRUE(store->AppendBatch(Batch(id, 21, 21, 22)).ok());
  EXPECT_EQ(store->AppendBatch(Batch(id, 5, 5, 6)).code(), absl::StatusCode::kAlreadyExists);
}

TEST_P(StorageTest, DictionaryOfAnUnknownProcessIsEmptyAndChunksStayPerProcess) {
  auto store = Open();
  auto a = *store->UpsertProcess(TestIdentity("a", "j"), 1);
  auto b = *store->UpsertProcess(TestIdentity("b", "j"), 1);
  v1::Dictionary d;
  auto* s = d.add_strings();
  s->set_ref(7);
  s->set_value("only a");
  ASSERT_TRUE(store->AppendDictionary(a, d).ok());
  EXPECT_EQ(store->LoadDictionary(a)->strings_size(), 1);
  EXPECT_EQ(store->LoadDictionary(b)->strings_size(), 0);
  EXPECT_EQ(store->LoadDictionary(12345)->ByteSizeLong(), 0u);
}

TEST_P(StorageTest, UpsertStepsReplacesByNumber) {
  auto store = Open();
  ASSERT_TRUE(store->UpsertSteps({{1, 7, 0, 10, "nvtx"}}).ok());
  ASSERT_TRUE(store->UpsertSteps({{1, 7, 0, 15, "nvtx"}}).ok());
  auto steps = store->ListSteps(1);
  ASSERT_EQ(steps->size(), 1u);
  EXPECT_EQ((*steps)[0].end_ns, 15);
}

TEST_P(StorageTest, UpsertStepsKeepsTheLastOfRepeatsAndAnySourceText) {
  auto store = Open();
  const std::string odd_source = "nvtx:\"quoted\" \\back\\slash, {braces} \u00e9";
  ASSERT_TRUE(store->UpsertSteps({{2, 1, 0, 10, "window"},
                                  {2, 2, 10, 20, odd_source},
                                  {2, 1, 0, 12, "nvtx:ProfilerStep#"},
                                  {3, 1, 5, 6, ""}})
                  .ok());
  EXPECT_EQ(*store->ListSteps(2), (std::vector<StepRecord>{{2, 1, 0, 12, "nvtx:ProfilerStep#"},
                                                           {2, 2, 10, 20, odd_source}}));
  EXPECT_EQ(*store->ListSteps(3), (std::vector<StepRecord>{{3, 1, 5, 6, ""}}));
  EXPECT_TRUE(store->ListSteps(4)->empty());
  ASSERT_TRUE(store->UpsertSteps({}).ok());
}

TEST_P(StorageTest, SegmentsRollAtTheirSizeLimit) {
  auto store = Open(/*segment_bytes=*/4096);
  auto id = store->UpsertProcess(TestIdentity("p1", "job"), 100);
  for (uint64_t seq = 1; seq <= 40; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(*id, seq, seq, seq, 900)).ok());
  // 4 batches of 900 bytes (plus per-record overhead) fit 4096 bytes: 10 segments.
  EXPECT_GE(store->Stats().segments, 9u);
  EXPECT_LE(store->Stats().segments, 11u);
  EXPECT_EQ(store->ReadBatches(*id, 0, 0)->size(), 40u);
}

TEST_P(StorageTest, RetentionByBytesEvictsOldestAndKeepsNewest) {
  auto store = Open(/*segment_bytes=*/4096);
  auto id = store->UpsertProcess(TestIdentity("p1", "job"), 100);
  for (uint64_t seq = 1; seq <= 40; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(*id, seq, seq, seq, 900)).ok());
  const StoreStats before = store->Stats();
  const uint64_t bytes = factory_.SegmentBytes();
  ASSERT_GT(bytes, 40u * 900);
  auto evicted = store->EnforceRetention({/*max_bytes=*/bytes / 2, 0}, 0);
  ASSERT_TRUE(evicted.ok()) << evicted.status();
  EXPECT_GT(*evicted, 0u);
  EXPECT_LE(factory_.SegmentBytes(), bytes / 2);
  auto left = store->ReadBatches(*id, 0, 0);
  ASSERT_FALSE(left->empty());
  EXPECT_EQ(left->back().sequence, 40u);  // the newest stays
  EXPECT_GT(left->front().sequence, 1u);  // the oldest went
  // What is left is a contiguous run up to the newest.
  EXPECT_EQ(left->back().sequence - left->front().sequence + 1, left->size());
  const StoreStats after = store->Stats();
  EXPECT_EQ(after.segments, before.segments - *evicted);
  EXPECT_EQ(after.batches, left->size());
  EXPECT_EQ(after.segments_evicted, *evicted);
  // Batch counters describe what was ever stored: eviction is not a gap.
  EXPECT_EQ(store->GetProcess(*id)->sequence_gaps(), 0u);
  EXPECT_EQ(store->GetProcess(*id)->batch_count, 40u);
  // A second pass at the same limit finds nothing more to do.
  EXPECT_EQ(*store->EnforceRetention({bytes / 2, 0}, 0), 0u);
}

// Issue 22, 6c: `gpuspy jobs` showed the events and steps of evicted data for ever.
TEST_P(StorageTest, EvictionTakesItsEventsAndStepsOutOfTheProcessCounts) {
  auto store = Open(/*segment_bytes=*/4096);
  auto id = *store->UpsertProcess(TestIdentity("p1", "job"), 100);
  auto other = *store->UpsertProcess(TestIdentity("p2", "job"), 100);
  std::vector<StepRecord> steps;
  for (uint64_t seq = 1; seq <= 40; ++seq) {
    const int64_t t = static_cast<int64_t>(seq) * 1000;
    ASSERT_TRUE(store->AppendBatch(Batch(id, seq, t, t + 500, 900)).ok());
    steps.push_back({id, static_cast<int64_t>(seq), t, t + 500, "nvtx:ProfilerStep#"});
  }
  ASSERT_TRUE(store->UpsertSteps(steps).ok());
  // A process with steps and no batch in the evicted partitions keeps both.
  ASSERT_TRUE(store->UpsertSteps({{other, 1, 0, 10, "window"}}).ok());
  ASSERT_EQ(store->GetProcess(id)->event_count, 400u);

  ASSERT_GT(*store->EnforceRetention({/*max_bytes=*/factory_.SegmentBytes() / 2, 0}, 0), 0u);
  auto left = store->ReadBatches(id, 0, 0);
  ASSERT_TRUE(left.ok());
  ASSERT_FALSE(left->empty());
  ASSERT_LT(left->size(), 40u);
  const ProcessRecord p = *store->GetProcess(id);
  EXPECT_EQ(p.event_count, 10u * left->size()) << "events of evicted batches still counted";
  EXPECT_EQ(p.batch_count, 40u);
  EXPECT_EQ(p.sequence_gaps(), 0u);
  // Step N covers batch N: the steps of evicted batches went, the others stayed.
  auto kept = store->ListSteps(id);
  ASSERT_TRUE(kept.ok());
  ASSERT_EQ(kept->size(), left->size());
  EXPECT_EQ(kept->front().number, static_cast<int64_t>(left->front().sequence));
  EXPECT_EQ(store->ListSteps(other)->size(), 1u);
  EXPECT_EQ(store->GetProcess(other)->event_count, 0u);

  // Everything of the process evicted (age): no events and no steps are left to count.
  const int64_t far_future = NowNs() + 3600LL * 1'000'000'000;
  ASSERT_TRUE(store->EnforceRetention({0, /*max_age_ns=*/1'000'000'000}, far_future).ok());
  EXPECT_EQ(store->GetProcess(id)->event_count, 0u);
  EXPECT_TRUE(store->ListSteps(id)->empty());
  EXPECT_EQ(store->GetProcess(id)->batch_count, 40u);
}

TEST_P(StorageTest, ByteRetentionNeverEvictsTheOnlyActiveSegment) {
  auto store = Open();
  auto id = *store->UpsertProcess(TestIdentity("p", "j"), 1);
  for (uint64_t seq = 1; seq <= 5; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq, 1000)).ok());
  EXPECT_EQ(*store->EnforceRetention({/*max_bytes=*/100, 0}, NowNs()), 0u);
  EXPECT_EQ(store->ReadBatches(id, 0, 0)->size(), 5u);
}

TEST_P(StorageTest, RetentionByAgeSealsAnIdleActiveSegment) {
  auto store = Open();
  auto id = store->UpsertProcess(TestIdentity("p1", "job"), 100);
  ASSERT_TRUE(store->AppendBatch(Batch(*id, 1, 1, 2)).ok());
  const int64_t far_future = NowNs() + 3600LL * 1'000'000'000;
  auto evicted = store->EnforceRetention({0, /*max_age_ns=*/1'000'000'000}, far_future);
  ASSERT_TRUE(evicted.ok()) << evicted.status();
  EXPECT_EQ(*evicted, 1u);
  EXPECT_TRUE(store->ReadBatches(*id, 0, 0)->empty());
  EXPECT_TRUE(store->AppendBatch(Batch(*id, 2, 2, 3)).ok());  // writing goes on
  EXPECT_EQ(store->ReadBatches(*id, 0, 0)->size(), 1u);
  // An empty active segment is not evicted, however old.
  ASSERT_TRUE(store->EnforceRetention({0, 1'000'000'000}, far_future + 7200LL * 1'000'000'000).ok());
  EXPECT_EQ(*store->EnforceRetention({0, 1'000'000'000}, far_future + 7200LL * 1'000'000'000), 0u);
}

TEST_P(StorageTest, AgeRetentionEvictsOnlySegmentsIdleTooLongOldestFirst) {
  // 4 records of 900 bytes (+ overhead) fit a 4096-byte segment.
  auto store = Open(/*segment_bytes=*/4096);
  auto id = *store->UpsertProcess(TestIdentity("p", "j"), 1);
  for (uint64_t seq = 1; seq <= 8; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq, 900)).ok());
  ASSERT_EQ(store->Stats().segments, 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const int64_t cutoff = NowNs();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (uint64_t seq = 9; seq <= 12; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq, 900)).ok());
  ASSERT_EQ(store->Stats().segments, 3u);
  const int64_t now = NowNs();
  auto evicted = store->EnforceRetention({0, /*max_age_ns=*/now - cutoff}, now);
  ASSERT_TRUE(evicted.ok()) << evicted.status();
  EXPECT_EQ(*evicted, 2u);
  EXPECT_EQ(store->Stats().segments, 1u);
  auto left = store->ReadBatches(id, 0, 0);
  EXPECT_EQ(Sequences(*left), (std::vector<uint64_t>{9, 10, 11, 12}));
  EXPECT_EQ(left->back().payload, Batch(id, 12, 0, 0, 900).payload);
  // Nothing else is old enough: a second pass is a no-op.
  EXPECT_EQ(*store->EnforceRetention({0, now - cutoff}, now), 0u);
  EXPECT_EQ(store->Stats().segments_evicted, 2u);
}

TEST_P(StorageTest, LossCountersKeepTheLargestCumulativeValue) {
  auto store = Open();
  auto id = *store->UpsertProcess(TestIdentity("p", "j"), 1);
  StoredBatch b = Batch(id, 2, 1, 1);
  b.loss = {10, 20, 30};
  ASSERT_TRUE(store->AppendBatch(b).ok());
  StoredBatch late = Batch(id, 1, 1, 1);  // arrives late with older counters
  late.loss = {5, 25, 0};
  ASSERT_TRUE(store->AppendBatch(late).ok());
  auto p = store->GetProcess(id);
  EXPECT_EQ(p->loss, (LossCounters{10, 25, 30}));
  EXPECT_EQ(p->max_sequence, 2u);
  EXPECT_EQ(p->sequence_gaps(), 0u);
  ASSERT_TRUE(store->AppendBatch(Batch(id, 5, 1, 1)).ok());
  EXPECT_EQ(store->GetProcess(id)->sequence_gaps(), 2u);  // 3 and 4 never came
}

TEST_P(StorageTest, StatsCountBatchesSegmentsAndBytes) {
  auto store = Open(/*segment_bytes=*/2048);
  auto id = *store->UpsertProcess(TestIdentity("p", "j"), 1);
  for (uint64_t seq = 1; seq <= 10; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq, 600)).ok());
  StoreStats s = store->Stats();
  const uint64_t segment_bytes = factory_.SegmentBytes();
  EXPECT_EQ(s.batches, 10u);
  EXPECT_EQ(s.segments, 4u);  // 3 records of ~600 bytes per 2048
  EXPECT_GT(segment_bytes, 10u * 600);
  EXPECT_GT(s.bytes_on_disk, segment_bytes);  // plus the index / the other tables
  EXPECT_EQ(s.corrupt_records, 0u);
  EXPECT_EQ(s.write_errors, 0u);
  EXPECT_EQ(s.segments_evicted, 0u);
  ASSERT_GT(*store->EnforceRetention({/*max_bytes=*/1, 0}, NowNs()), 0u);
  EXPECT_LT(store->Stats().batches, 10u);
  EXPECT_EQ(store->Stats().segments, 1u);
  EXPECT_LT(factory_.SegmentBytes(), segment_bytes);
}

TEST_P(StorageTest, ConcurrentAppendsAndReadsStayConsistent) {
  auto store = Open(/*segment_bytes=*/64 * 1024);
  std::vector<uint64_t> ids;
  for (int p = 0; p < 4; ++p) ids.push_back(*store->UpsertProcess(TestIdentity("p" + std::to_string(p), "job"), 1));
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::thread reader([&] {
    while (!done.load()) {
      for (uint64_t id : ids) {
        auto b = store->ReadBatches(id, 0, 0);
        if (!b.ok()) {
          ++failures;
          continue;
        }
        for (size_t i = 1; i < b->size(); ++i) {
          if ((*b)[i - 1].sequence >= (*b)[i].sequence) ++failures;
        }
      }
    }
  });
  std::vector<std::thread> writers;
  for (uint64_t id : ids) {
    writers.emplace_back([&, id] {
      for (uint64_t seq = 1; seq <= 200; ++seq) {
        if (!store->AppendBatch(Batch(id, seq, seq, seq)).ok()) ++failures;
      }
    });
  }
  for (auto& w : writers) w.join();
  done = true;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  for (uint64_t id : ids) {
    EXPECT_EQ(store->ReadBatches(id, 0, 0)->size(), 200u);
    EXPECT_EQ(store->GetProcess(id)->batch_count, 200u);
    EXPECT_EQ(store->GetProcess(id)->event_count, 2000u);
  }
}

// Writers, a reader and retention at once. Retention removes whole segments oldest first and
// each process appends in sequence order, so what is left of a process is always a contiguous
// run ending at its newest batch, and the counters still describe everything ever stored.
TEST_P(StorageTest, AppendsReadsAndRetentionRaceSafely) {
  auto store = Open(/*segment_bytes=*/16 * 1024);
  std::vector<uint64_t> ids;
  for (int p = 0; p < 4; ++p) ids.push_back(*store->UpsertProcess(TestIdentity("p" + std::to_string(p), "j"), 1));
  constexpr uint64_t kPerProcess = 150;
  // Room for a few segments of either backend (a PostgreSQL partition carries ~40 KB of indexes
  // and TOAST table besides its rows, an embedded segment nothing).
  const uint64_t max_bytes = GetParam() == StoreBackend::kEmbedded ? 64 * 1024 : 160 * 1024;
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  std::thread reader([&] {
    while (!done.load()) {
      for (uint64_t id : ids) {
        auto b = store->ReadBatches(id, 0, 0);
        if (!b.ok()) {
          ++failures;
          continue;
        }
        for (size_t i = 1; b.ok() && i < b->size(); ++i) {
          if ((*b)[i].sequence != (*b)[i - 1].sequence + 1) ++failures;
        }
        for (const StoredBatch& x : *b) {
          if (x.payload != Batch(id, x.sequence, 0, 0, 200).payload) ++failures;
        }
      }
      (void)store->Stats();
    }
  });
  std::thread janitor([&] {
    while (!done.load()) {
      if (!store->EnforceRetention({max_bytes, 0}, NowNs()).ok()) ++failures;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  std::vector<std::thread> writers;
  for (uint64_t id : ids) {
    writers.emplace_back([&, id] {
      for (uint64_t seq = 1; seq <= kPerProcess; ++seq) {
        if (!store->AppendBatch(Batch(id, seq, seq, seq, 200)).ok()) ++failures;
      }
    });
  }
  for (auto& w : writers) w.join();
  done = true;
  reader.join();
  janitor.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_TRUE(store->EnforceRetention({max_bytes, 0}, NowNs()).ok());
  for (uint64_t id : ids) {
    auto left = store->ReadBatches(id, 0, 0);
    ASSERT_TRUE(left.ok());
    // A writer that finished early may have had all of its segments evicted.
    if (left->empty()) continue;
    EXPECT_EQ(left->back().sequence, kPerProcess);
    EXPECT_EQ(left->back().sequence - left->front().sequence + 1, left->size());
  }
  for (uint64_t id : ids) {
    auto p = store->GetProcess(id);
    EXPECT_EQ(p->batch_count, kPerProcess);
    // Events count what is stored: the evicted ones are taken out, however the races fell.
    EXPECT_EQ(p->event_count, 10 * store->ReadBatches(id, 0, 0)->size());
  }
  EXPECT_GT(store->Stats().segments_evicted, 0u);
  EXPECT_EQ(store->Stats().corrupt_records, 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, StorageTest,
                         ::testing::Values(StoreBackend::kEmbedded, StoreBackend::kPostgres),
                         gpuspy::testing::StoreBackendName);

}  // namespace
}  // namespace gpuspy::collector
