// IngestAdmission (the collector's overload bounds: streams, ingest memory) and OverloadLedger
// (refusals per process).
#include "collector/ingest/ingest_admission.h"

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "collector/live/overload_ledger.h"

namespace gpuspy::collector {
namespace {

AdmissionOptions Small() {
  AdmissionOptions o;
  o.max_streams = 2;
  o.memory_bytes = 1000;
  o.max_wait = absl::Milliseconds(50);
  return o;
}

TEST(IngestAdmission, StreamsBeyondTheBoundAreRefusedAndSlotsComeBack) {
  IngestCounters counters;
  IngestAdmission admission(Small(), &counters);
  EXPECT_EQ(counters.max_ingest_streams.load(), 2u);
  std::optional<IngestAdmission::StreamSlot> a = admission.OpenStream();
  std::optional<IngestAdmission::StreamSlot> b = admission.OpenStream();
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  EXPECT_FALSE(admission.OpenStream().has_value());
  EXPECT_EQ(counters.ingest_streams_refused.load(), 1u);
  EXPECT_EQ(admission.streams_open(), 2u);
  a.reset();
  EXPECT_EQ(admission.streams_open(), 1u);
  EXPECT_TRUE(admission.OpenStream().has_value());  // and released again at once
  EXPECT_EQ(admission.streams_open(), 1u);
}

TEST(IngestAdmission, MemoryBeyondTheBudgetWaitsThenIsRefused) {
  IngestCounters counters;
  IngestAdmission admission(Small(), &counters);
  bool waited = true;
  std::optional<IngestAdmission::Reservation> r1 = admission.Reserve(600, &waited);
  ASSERT_TRUE(r1.has_value());
  EXPECT_FALSE(waited);
  EXPECT_EQ(admission.bytes_in_flight(), 600u);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(admission.Reserve(600, &waited).has_value());
  EXPECT_TRUE(waited);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(45));
  EXPECT_EQ(counters.ingest_batches_refused.load(), 1u);
  // What fits is taken at once.
  std::optional<IngestAdmission::Reservation> r2 = admission.Reserve(400, &waited);
  ASSERT_TRUE(r2.has_value());
  EXPECT_FALSE(waited);
  EXPECT_EQ(counters.ingest_bytes_in_flight.load(), 1000u);
  EXPECT_EQ(counters.ingest_peak_bytes_in_flight.load(), 1000u);
  r1.reset();
  r2.reset();
  EXPECT_EQ(admission.bytes_in_flight(), 0u);
  EXPECT_EQ(counters.ingest_bytes_in_flight.load(), 0u);
  EXPECT_EQ(counters.ingest_peak_bytes_in_flight.load(), 1000u);
}

TEST(IngestAdmission, AWaitingBatchIsTakenWhenAnotherReleases) {
  IngestCounters counters;
  AdmissionOptions o = Small();
  o.max_wait = absl::Seconds(10);
  IngestAdmission admission(o, &counters);
  bool waited = false;
  std::optional<IngestAdmission::Reservation> held = admission.Reserve(900, &waited);
  ASSERT_TRUE(held.has_value());
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    held.reset();
  });
  std::optional<IngestAdmission::Reservation> next = admission.Reserve(900, &waited);
  releaser.join();
  ASSERT_TRUE(next.has_value());
  EXPECT_TRUE(waited);
  EXPECT_EQ(counters.ingest_batches_deferred.load(), 1u);
  EXPECT_EQ(counters.ingest_batches_refused.load(), 0u);
}

TEST(IngestAdmission, ABatchLargerThanTheBudgetPassesAlone) {
  IngestAdmission admission(Small());
  bool waited = false;
  std::optional<IngestAdmission::Reservation> big = admission.Reserve(5000, &waited);
  ASSERT_TRUE(big.has_value()) << "must not starve: nothing else is in flight";
  EXPECT_FALSE(admission.Reserve(1, &waited).has_value()) << "but nothing passes beside it";
  EXPECT_FALSE(admission.AwaitRoom());
  big.reset();
  EXPECT_TRUE(admission.AwaitRoom());
}

TEST(IngestAdmission, ConcurrentReservationsNeverExceedTheBudget) {
  IngestCounters counters;
  AdmissionOptions o = Small();
  o.memory_bytes = 1000;
  o.max_wait = absl::Seconds(5);
  IngestAdmission admission(o, &counters);
  std::atomic<uint64_t> taken{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        bool waited = false;
        std::optional<IngestAdmission::Reservation> r = admission.Reserve(300, &waited);
        if (!r.has_value()) continue;
        EXPECT_LE(admission.bytes_in_flight(), 1000u);
        taken.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(taken.load() + counters.ingest_batches_refused.load(), 1600u);
  EXPECT_LE(counters.ingest_peak_bytes_in_flight.load(), 1000u);
  EXPECT_EQ(admission.bytes_in_flight(), 0u);
}

TEST(IngestAdmission, BatchCostGrowsWithWireBytesAndEvents) {
  v1::EventBatch small, big;
  small.set_sequence(1);
  big.set_sequence(1);
  big.mutable_dictionary()->add_strings()->set_value(std::string(10000, 'k'));
  EXPECT_GT(BatchCost(big), BatchCost(small) + 3 * 10000 - 1);
}

TEST(OverloadLedger, CountsPerProcessAndReason) {
  OverloadLedger ledger;
  ledger.Note(7, OverloadReason::kStreamRefused, 100);
  ledger.Note(7, OverloadReason::kStreamRefused, 200);
  ledger.Note(7, OverloadReason::kBatchRefused, 300);
  ledger.Note(7, OverloadReason::kBatchDeferred, 400);
  ledger.Note(9, OverloadReason::kBatchDeferred, 500);
  const v1::OverloadCounters p7 = ledger.Get(7);
  EXPECT_EQ(p7.streams_refused(), 2u);
  EXPECT_EQ(p7.batches_refused(), 1u);
  EXPECT_EQ(p7.batches_deferred(), 1u);
  EXPECT_EQ(p7.last_refused_unix_ns(), 300);
  EXPECT_EQ(ledger.Get(9).batches_deferred(), 1u);
  EXPECT_EQ(ledger.Get(9).last_refused_unix_ns(), 0);
  EXPECT_EQ(ledger.Get(8).ByteSizeLong(), 0u) << "never refused: zeros";
  EXPECT_EQ(ledger.size(), 2u);
}

}  // namespace
}  // namespace gpuspy::collector
