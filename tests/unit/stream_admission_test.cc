// StreamAdmission: one ingest stream's part in overload control — it holds the stream's slot and
// each batch's share of the memory budget, notes refusals and waits against the process, and says
// what a refused producer is told (the retry hint and the flag to raise).
#include "collector/ingest/stream_admission.h"

#include <gtest/gtest.h>

#include <optional>

namespace gpuspy::collector {
namespace {

constexpr uint64_t kProcess = 7;

v1::EventBatch Batch(uint64_t sequence) {
  v1::EventBatch b;
  b.set_sequence(sequence);
  return b;
}

TEST(StreamAdmission, WithoutBoundsEveryStreamAndBatchIsTaken) {
  StreamAdmission s(nullptr, nullptr, "test", kProcess);
  EXPECT_FALSE(s.OpenStream().has_value());
  s.AwaitRoom();
  EXPECT_FALSE(s.ReserveBatch(Batch(1)).has_value());
}

TEST(StreamAdmission, AStreamPastTheBoundIsRefusedNotedAndItsSlotComesBack) {
  AdmissionOptions o;
  o.max_streams = 1;
  o.stream_retry_after = absl::Seconds(3);
  IngestCounters counters;
  IngestAdmission admission(o, &counters);
  OverloadLedger ledger;
  {
    StreamAdmission first(&admission, &ledger, "a", 1);
    ASSERT_FALSE(first.OpenStream().has_value());
    StreamAdmission second(&admission, &ledger, "b", kProcess);
    const std::optional<StreamAdmission::Refusal> refused = second.OpenStream();
    ASSERT_TRUE(refused.has_value());
    EXPECT_EQ(refused->retry_after, absl::Seconds(3));
    EXPECT_NE(refused->message.find("--max-ingest-streams"), std::string::npos) << refused->message;
    EXPECT_EQ(ledger.Get(kProcess).streams_refused(), 1u);
    EXPECT_EQ(ledger.Get(1).streams_refused(), 0u);
  }
  // The first stream ended: its slot is free again.
  StreamAdmission third(&admission, &ledger, "c", kProcess);
  EXPECT_FALSE(third.OpenStream().has_value());
}

TEST(StreamAdmission, ABatchThatFindsNoRoomIsRefusedAfterWaitingAndTakenOnceReleased) {
  AdmissionOptions o;
  o.memory_bytes = BatchCost(Batch(1)) * 3 / 2;  // one batch fits, two do not
  o.max_wait = absl::Milliseconds(20);
  o.memory_retry_after = absl::Seconds(1);
  IngestCounters counters;
  IngestAdmission admission(o, &counters);
  OverloadLedger ledger;
  StreamAdmission holder(&admission, &ledger, "a", 1);
  StreamAdmission s(&admission, &ledger, "b", kProcess);
  ASSERT_FALSE(holder.OpenStream().has_value());
  ASSERT_FALSE(s.OpenStream().has_value());

  ASSERT_FALSE(holder.ReserveBatch(Batch(1)).has_value());
  const std::optional<StreamAdmission::Refusal> refused = s.ReserveBatch(Batch(1));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->retry_after, absl::Seconds(1));
  EXPECT_NE(refused->message.find("--ingest-memory-mb"), std::string::npos) << refused->message;
  EXPECT_EQ(ledger.Get(kProcess).batches_refused(), 1u);

  holder.ReleaseBatch();
  EXPECT_FALSE(s.ReserveBatch(Batch(2)).has_value());
  EXPECT_EQ(ledger.Get(kProcess).batches_refused(), 1u);
}

}  // namespace
}  // namespace gpuspy::collector
