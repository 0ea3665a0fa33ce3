// Delivery, the core's connection state machine, against a scripted collector: a batch goes to
// the collector, or to the spill file while it is away, and the spill is replayed in order, before
// anything newer, once it is back; refusals are counted and not retried; back-off holds; at exit
// nothing waits past the deadline.
#include "inject/core/delivery.h"

#include <gtest/gtest.h>

#include <deque>

#include "tests/support/subprocess.h"

namespace gpuspy::inject {
namespace {

// A collector whose answers the test scripts; everything it stored, in order.
class ScriptedSink : public BatchSink {
 public:
  struct Script {
    std::deque<absl::Status> connects;    // answers to Connect, then OK
    std::deque<absl::Status> deliveries;  // answers to Deliver, then OK
    std::vector<uint64_t> stored;         // sequences acknowledged
    int connect_calls = 0;
    int definitions_resent = 0;
  };
  explicit ScriptedSink(Script* s) : s_(s) {}
  absl::StatusOr<uint64_t> Connect(const v1::ProcessIdentity&, absl::Duration) override {
    ++s_->connect_calls;
    absl::Status st = absl::OkStatus();
    if (!s_->connects.empty()) {
      st = s_->connects.front();
      s_->connects.pop_front();
    }
    connected_ = st.ok();
    if (!st.ok()) return st;
    return uint64_t{0};
  }
  absl::Status Deliver(const v1::EventBatch& batch, absl::Duration) override {
    absl::Status st = absl::OkStatus();
    if (!s_->deliveries.empty()) {
      st = s_->deliveries.front();
      s_->deliveries.pop_front();
    }
    if (st.ok()) s_->stored.push_back(batch.sequence());
    return st;
  }
  void Disconnect() override { connected_ = false; }
  bool Connected() const override { return connected_; }
  absl::Status Send(const v1::ClientMessage&) override { return absl::OkStatus(); }
  std::vector<v1::Command> TakeCommands() override { return {}; }

 private:
  Script* s_;
  bool connected_ = false;
};

class DeliveryTest : public ::testing::Test {
 protected:
  DeliveryTest() {
    config_.spill_dir = dir_.path();
    config_.ack_timeout_ms = 200;
    identity_.set_process_key("host:1:1");
    identity_.set_host("host");
    identity_.set_pid(1);
  }
  Delivery Make() {
    return Delivery(config_, &identity_, std::make_unique<ScriptedSink>(&script_), &stats_,
                    Delivery::ExitSignal{.stopping = &stopping_, .deadline = &deadline_},
                    Delivery::Hooks{.resend_definitions = [this] { ++script_.definitions_resent; }});
  }
  static v1::EventBatch Batch(uint64_t sequence) {
    v1::EventBatch b;
    b.set_sequence(sequence);
    return b;
  }

  testing::TempDir dir_;
  CoreConfig config_;
  v1::ProcessIdentity identity_;
  PipelineStats stats_;
  std::atomic<bool> stopping_{false};
  Delivery::Clock::time_point deadline_{};
  ScriptedSink::Script script_;
};

TEST_F(DeliveryTest, ABatchGoesToTheCollectorWhenItIsThere) {
  Delivery d = Make();
  d.Deliver(Batch(1), 10);
  d.Deliver(Batch(2), 10);
  EXPECT_EQ(script_.stored, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(script_.connect_calls, 1);
  EXPECT_EQ(stats_.batches_delivered.load(), 2u);
  EXPECT_TRUE(d.spill_empty());
}

TEST_F(DeliveryTest, WhileTheCollectorIsAwayBatchesAreSpilledThenReplayedFirstInOrder) {
  script_.connects = {absl::UnavailableError("connection refused")};
  Delivery d = Make();
  d.Deliver(Batch(1), 10);  // away: spilled, and a back-off of 100 ms starts
  EXPECT_FALSE(d.connected());
  EXPECT_FALSE(d.spill_empty());
  d.Deliver(Batch(2), 10);  // within the back-off: no new attempt, spilled behind it
  EXPECT_EQ(script_.connect_calls, 1);
  EXPECT_EQ(stats_.batches_spilled.load(), 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  d.Deliver(Batch(3), 10);
  EXPECT_EQ(script_.stored, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(stats_.batches_replayed.load(), 2u);
  EXPECT_TRUE(d.spill_empty());
  EXPECT_EQ(stats_.connect_failures.load(), 1u);
}

TEST_F(DeliveryTest, AFailedDeliveryKeepsTheBatchAndItsOrder) {
  script_.deliveries = {absl::OkStatus(), absl::UnavailableError("stream broke")};
  Delivery d = Make();
  d.Deliver(Batch(1), 10);
  d.Deliver(Batch(2), 10);  // fails: spilled, session dropped
  EXPECT_FALSE(d.connected());
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  d.Deliver(Batch(3), 10);
  EXPECT_EQ(script_.stored, (std::vector<uint64_t>{1, 2, 3}));
}

TEST_F(DeliveryTest, ARefusedBatchIsCountedAndNotRetried) {
  script_.deliveries = {absl::InvalidArgumentError("bad batch")};
  Delivery d = Make();
  d.Deliver(Batch(1), 10);
  d.Deliver(Batch(2), 10);
  EXPECT_EQ(script_.stored, (std::vector<uint64_t>{2}));
  EXPECT_EQ(stats_.batches_refused.load(), 1u);
  EXPECT_TRUE(d.spill_empty());
  // The refused batch may have defined names: the encoder defines them again (and on connect).
  EXPECT_EQ(script_.definitions_resent, 2);
}

TEST_F(DeliveryTest, AnOverloadedCollectorIsNotRetriedBeforeItsHint) {
  script_.connects = {absl::ResourceExhaustedError("too many producers")};
  Delivery d = Make();
  d.Deliver(Batch(1), 10);
  d.Deliver(Batch(2), 10);  // the hint (1 s without one from the collector) has not passed
  EXPECT_EQ(script_.connect_calls, 1);
  EXPECT_EQ(stats_.overload_refusals.load(), 1u);
  EXPECT_EQ(stats_.connect_failures.load(), 0u);  // overloaded is not unreachable
  EXPECT_EQ(stats_.batches_spilled.load(), 2u);
}

TEST_F(DeliveryTest, AtExitNothingWaitsPastTheDeadlineAndTheRestStaysSpilled) {
  script_.connects = {absl::UnavailableError("down"), absl::UnavailableError("down")};
  Delivery d = Make();
  d.Deliver(Batch(1), 10);
  deadline_ = Delivery::Clock::now() - std::chrono::milliseconds(1);
  stopping_ = true;
  const auto start = Delivery::Clock::now();
  d.Deliver(Batch(2), 10);
  EXPECT_LT(Delivery::Clock::now() - start, std::chrono::milliseconds(100));
  EXPECT_TRUE(script_.stored.empty());
  EXPECT_EQ(stats_.batches_spilled.load(), 2u);
  EXPECT_FALSE(d.spill_empty());
}

TEST_F(DeliveryTest, AFullSpillDropsAndCountsTheEventsItCouldNotKeep) {
  config_.spill_max_bytes = 1;  // nothing fits
  script_.connects = {absl::UnavailableError("down")};
  Delivery d = Make();
  d.Deliver(Batch(1), 37);
  EXPECT_EQ(stats_.spill_dropped_events.load(), 37u);
  EXPECT_EQ(stats_.batches_spilled.load(), 0u);
}

}  // namespace
}  // namespace gpuspy::inject
