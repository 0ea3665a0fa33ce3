// The core's data pump with a fake sink: delivery, spilling while the collector is away, replay
// in order, bounded spill, refused batches, bounded exit; a dormant process registering and
// handing the collector's commands to its capture controller (whose rules have their own test,
// capture_controller_test.cc).
#include "inject/core/event_pipeline.h"

#include "inject/core/activity_parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <deque>
#include <mutex>
#include <vector>

#include "client/transport/ingest_client.h"
#include "codec/batch_decoder.h"
#include "tests/support/subprocess.h"

namespace gpuspy::inject {
namespace {

// Test framing of API records, walked by a stand-in for cuptiActivityGetNextRecord.
CUptiResult CUPTIAPI NextApiRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  size_t offset = *record == nullptr ? 0
                                     : reinterpret_cast<uint8_t*>(*record) - buffer +
                                           sizeof(CUpti_ActivityAPI);
  if (offset + sizeof(CUpti_ActivityAPI) > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  return CUPTI_SUCCESS;
}

// One record per buffer. After an API record the walk ends on an error (what CUPTI says of a
// record it cannot size), after any other at the buffer's end.
CUptiResult CUPTIAPI NextOneRecord(uint8_t* buffer, size_t, CUpti_Activity** record) {
  if (*record == nullptr) {
    *record = reinterpret_cast<CUpti_Activity*>(buffer);
    return CUPTI_SUCCESS;
  }
  return (*record)->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_ERROR_INVALID_KIND
                                                         : CUPTI_ERROR_MAX_LIMIT_REACHED;
}

// Shared state of the fake collector: what it accepted, and whether it is "up".
struct FakeCollector {
  std::mutex mu;
  bool up = true;
  bool hang = false;
  bool overloaded = false;  // refuses connects and batches with RESOURCE_EXHAUSTED + a retry hint
  bool batches_overloaded = false;  // takes the stream but refuses batches (its memory is full)
  int overload_refusals = 0;
  uint64_t refuse_sequence = 0;
  std::vector<uint64_t> correlation_ids;  // every API event received, in order
  std::vector<uint64_t> sequences;
  int connects = 0;
  std::vector<v1::Command> to_push;           // handed to the process on its next poll
  std::vector<v1::ClientMessage> messages;    // heartbeats and capture statuses received
  std::vector<v1::CaptureStatus> Statuses() {
    std::lock_guard lock(mu);
    std::vector<v1::CaptureStatus> out;
    for (const auto& m : messages) {
      if (m.has_capture_status()) out.push_back(m.capture_status());
    }
    return out;
  }
  int Heartbeats() {
    std::lock_guard lock(mu);
    return static_cast<int>(std::count_if(messages.begin(), messages.end(),
                                          [](const auto& m) { return m.has_heartbeat(); }));
  }
};

class FakeSink : public BatchSink {
 public:
  explicit FakeSink(FakeCollector* c) : c_(c) {}
  absl::StatusOr<uint64_t> Connect(const v1::ProcessIdentity&, absl::Duration) override {
    std::lock_guard lock(c_->mu);
    if (!c_->up) return absl::UnavailableError("collector down");
    if (c_->overloaded) return Overloaded();
    ++c_->connects;
    return 0;
  }
  absl::Status Deliver(const v1::EventBatch& batch, absl::Duration timeout) override {
    {
      std::lock_guard lock(c_->mu);
      if (c_->hang) {
        // A collector that never acknowledges: wait out the caller's timeout.
      } else if (!c_->up) {
        return absl::UnavailableError("collector down");
      } else if (c_->overloaded || c_->batches_overloaded) {
        return Overloaded();
      } else if (batch.sequence() == c_->refuse_sequence) {
        return absl::InvalidArgumentError("refused");
      } else {
        if (absl::Status st = dict_.Apply(batch.dictionary()); !st.ok()) return st;
        EventColumns ev;
        if (absl::Status st = DecodeBatch(batch, dict_, &ev); !st.ok()) return st;
        for (const auto& a : ev.apis) c_->correlation_ids.push_back(a.correlation_id);
        c_->sequences.push_back(batch.sequence());
        return absl::OkStatus();
      }
    }
    std::this_thread::sleep_for(std::min(absl::ToChronoMilliseconds(timeout),
                                         std::chrono::milliseconds(120'000)));
    return absl::DeadlineExceededError("no ack");
  }
  void Disconnect() override {}
  bool Connected() const override {
    std::lock_guard lock(c_->mu);
    return c_->up;
  }
  absl::Status Send(const v1::ClientMessage& message) override {
    std::lock_guard lock(c_->mu);
    if (!c_->up) return absl::UnavailableError("collector down");
    c_->messages.push_back(message);
    return absl::OkStatus();
  }
  std::vector<v1::Command> TakeCommands() override {
    std::lock_guard lock(c_->mu);
    std::vector<v1::Command> out;
    out.swap(c_->to_push);
    return out;
  }

 private:
  absl::Status Overloaded() {  // c_->mu held
    ++c_->overload_refusals;
    return WithRetryAfter(absl::ResourceExhaustedError("overloaded"), absl::Milliseconds(200));
  }

  FakeCollector* c_;
  ProcessDictionary dict_;  // the collector side's dictionary survives reconnects
};

class EventPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.ActivityGetNextRecord = &NextApiRecord;
    config_.flush_period_ms = 10;
    config_.batch_events = 50;
    config_.spill_dir = dir_.path();
    config_.ack_timeout_ms = 200;
    identity_.set_process_key("test");
    identity_.set_host("h");
    identity_.set_pid(1);
  }

  // The capture layer's parser over the test's fake CUPTI walk.
  MakeRecordParser Parser() {
    return [this](StringTable* strings) -> std::unique_ptr<RecordParser> {
      return std::make_unique<ActivityParser>(&api_, strings);
    };
  }

  void MakePipeline() {
    TracingControl tracing;
    tracing.enable = [this](const CaptureKinds& k) {
      std::lock_guard lock(collector_.mu);
      enabled_.push_back(k);
    };
    tracing.disable = [this] { ++disables_; };
    pipeline_ = std::make_unique<EventPipeline>(
        config_, Parser(), identity_, std::make_unique<FakeSink>(&collector_), &pool_, &completed_,
        [this](bool) { ++flushes_; }, [] { return uint64_t{0}; }, std::move(tracing));
    pipeline_->Start();
  }

  void Push(const v1::Command& c) {
    std::lock_guard lock(collector_.mu);
    collector_.to_push.push_back(c);
  }

  // Waits (bounded) until `pred` holds; the pipeline runs on its own thread.
  template <typename Pred>
  bool Eventually(Pred pred) {
    for (int i = 0; i < 500; ++i) {
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pred();
  }

  // Hands the pipeline one buffer of `n` API records with consecutive correlation ids.
  void Produce(int n) {
    uint8_t* buf = pool_.Acquire();
    ASSERT_NE(buf, nullptr);
    for (int i = 0; i < n; ++i) {
      CUpti_ActivityAPI a{};
      a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
      a.cbid = 1;
      a.start = 1000 * next_corr_;
      a.end = a.start + 5;
      a.threadId = 1;
      a.correlationId = static_cast<uint32_t>(next_corr_++);
      std::memcpy(buf + i * sizeof(a), &a, sizeof(a));
    }
    completed_.Push({buf, n * sizeof(CUpti_ActivityAPI)});
  }

  std::vector<uint64_t> Expected() const {
    std::vector<uint64_t> v;
    for (uint64_t i = 1; i < next_corr_; ++i) v.push_back(i);
    return v;
  }

  testing::TempDir dir_;
  CuptiApi api_;
  CoreConfig config_;
  v1::ProcessIdentity identity_;
  BufferPool pool_{64 * 1024, 64};
  CompletedBuffers completed_;
  FakeCollector collector_;
  std::unique_ptr<EventPipeline> pipeline_;
  std::atomic<int> flushes_{0};
  std::vector<CaptureKinds> enabled_;  // guarded by collector_.mu
  std::atomic<int> disables_{0};
  uint64_t next_corr_ = 1;
};

TEST_F(EventPipelineTest, DormantProcessRegistersHeartbeatsAndTracesOnlyWhenAttached) {
  config_.mode = CaptureMode::kOnDemand;
  config_.heartbeat_ms = 20;
  config_.kinds.nvtx = false;
  MakePipeline();
  // Registered and alive without having traced anything.
  ASSERT_TRUE(Eventually([&] { return collector_.Heartbeats() >= 2; }));
  {
    std::lock_guard lock(collector_.mu);
    EXPECT_EQ(collector_.connects, 1);
    EXPECT_TRUE(enabled_.empty());
    EXPECT_TRUE(collector_.sequences.empty());
  }
  v1::Command start;
  start.mutable_start_capture()->set_capture_id(42);
  start.mutable_start_capture()->set_steps(5);
  start.mutable_start_capture()->add_kinds("kernel");
  Push(start);
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(collector_.mu);
    return !enabled_.empty();
  }));
  {
    std::lock_guard lock(collector_.mu);
    EXPECT_TRUE(enabled_[0].kernel);
    EXPECT_FALSE(enabled_[0].memcpy);
    EXPECT_TRUE(enabled_[0].nvtx) << "step boundaries need NVTX even when not asked for";
  }
  ASSERT_TRUE(Eventually([&] {
    auto s = collector_.Statuses();
    return !s.empty() && s.back().state() == v1::CAPTURE_STATE_ARMED;
  }));
  EXPECT_EQ(collector_.Statuses().back().capture_id(), 42u);

  // A second attach while this one runs is refused, not merged.
  v1::Command other = start;
  other.mutable_start_capture()->set_capture_id(43);
  Push(other);
  ASSERT_TRUE(Eventually([&] {
    for (const auto& s : collector_.Statuses()) {
      if (s.capture_id() == 43 && s.state() == v1::CAPTURE_STATE_FAILED) return true;
    }
    return false;
  }));

  v1::Command stop;
  stop.mutable_stop_capture()->set_capture_id(42);
  Push(stop);
  ASSERT_TRUE(Eventually([&] {
    auto s = collector_.Statuses();
    return !s.empty() && s.back().capture_id() == 42 && s.back().state() == v1::CAPTURE_STATE_STOPPED;
  }));
  EXPECT_EQ(disables_.load(), 1);
  pipeline_->Stop(std::chrono::milliseconds(1000));
  std::lock_guard lock(collector_.mu);
  EXPECT_TRUE(collector_.sequences.empty()) << "stopped while armed: nothing to send";
}

TEST_F(EventPipelineTest, UntimedRecordsAndAbandonedBuffersAreCountedNotSent) {
  api_.ActivityGetNextRecord = &NextOneRecord;
  MakePipeline();
  {
    uint8_t* buf = pool_.Acquire();
    ASSERT_NE(buf, nullptr);
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = CUPTI_TIMESTAMP_UNKNOWN;  // CUPTI could not time it
    k.end = CUPTI_TIMESTAMP_UNKNOWN;
    k.name = "untimed";
    std::memcpy(buf, &k, sizeof(k));
    completed_.Push({buf, sizeof(k)});
  }
  ASSERT_TRUE(Eventually([&] { return pipeline_->stats().untimed_records.load() == 1; }));
  Produce(1);
  ASSERT_TRUE(Eventually([&] { return pipeline_->stats().unreadable_buffers.load() == 1; }));
  pipeline_->Stop(std::chrono::milliseconds(2000));
  EXPECT_EQ(collector_.correlation_ids, Expected()) << "the API record before the error is kept";
  EXPECT_EQ(pipeline_->stats().untimed_records.load(), 1u);
  EXPECT_EQ(pool_.in_use(), 0u);
}

TEST_F(EventPipelineTest, DeliversEveryEventOnceInOrderAndRecyclesBuffers) {
  MakePipeline();
  for (int i = 0; i < 20; ++i) Produce(37);
  pipeline_->Stop(std::chrono::milliseconds(2000));
  EXPECT_EQ(collector_.correlation_ids, Expected());
  EXPECT_EQ(pipeline_->stats().batches_spilled.load(), 0u);
  EXPECT_EQ(pool_.in_use(), 0u);
  EXPECT_GT(flushes_.load(), 0);
  // Sequences are consecutive from 1.
  for (size_t i = 0; i < collector_.sequences.size(); ++i) {
    EXPECT_EQ(collector_.sequences[i], i + 1);
  }
}

TEST_F(EventPipelineTest, SpillsWhileCollectorIsDownAndReplaysInOrderWhenBack) {
  collector_.up = false;
  MakePipeline();
  for (int i = 0; i < 10; ++i) Produce(40);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_GT(pipeline_->stats().batches_spilled.load(), 0u);
  {
    std::lock_guard lock(collector_.mu);
    collector_.up = true;
  }
  for (int i = 0; i < 5; ++i) Produce(40);
  pipeline_->Stop(std::chrono::milliseconds(3000));
  EXPECT_EQ(collector_.correlation_ids, Expected());
  EXPECT_GT(pipeline_->stats().batches_replayed.load(), 0u);
  EXPECT_EQ(pipeline_->stats().spill_dropped_events.load(), 0u);
}

TEST_F(EventPipelineTest, OverloadedCollectorIsRetriedAfterItsHintAndNothingIsLost) {
  MakePipeline();
  Produce(40);
  ASSERT_TRUE(Eventually([&] { return pipeline_->stats().batches_delivered.load() == 1; }));
  {
    std::lock_guard lock(collector_.mu);
    collector_.overloaded = true;
  }
  // A batch cut every ~10 ms for 600 ms: without the backoff each would try the collector again.
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(600)) {
    Produce(40);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  int refusals = 0;
  {
    std::lock_guard lock(collector_.mu);
    refusals = collector_.overload_refusals;
    collector_.overloaded = false;
  }
  // 200 ms hint, +-50% jitter: at most ~6 tries in 600 ms.
  EXPECT_GE(refusals, 1);
  EXPECT_LE(refusals, 8);
  EXPECT_GT(pipeline_->stats().batches_spilled.load(), 0u);
  EXPECT_EQ(pipeline_->stats().overload_refusals.load(), static_cast<uint64_t>(refusals));
  Produce(40);
  pipeline_->Stop(std::chrono::milliseconds(3000));
  EXPECT_EQ(collector_.correlation_ids, Expected()) << "kept in the spill and replayed in order";
  EXPECT_EQ(pipeline_->stats().spill_dropped_events.load(), 0u);
}

TEST_F(EventPipelineTest, AnExitWaitsOutAnOverloadWithinTheExitTimeout) {
  collector_.overloaded = true;
  MakePipeline();
  for (int i = 0; i < 5; ++i) Produce(40);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::thread relief([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    std::lock_guard lock(collector_.mu);
    collector_.overloaded = false;
  });
  // Stopping while refused: the final delivery keeps trying (after each hint) until the exit
  // timeout, so the spill is not left behind.
  pipeline_->Stop(std::chrono::milliseconds(3000));
  relief.join();
  EXPECT_EQ(collector_.correlation_ids, Expected());
}

TEST_F(EventPipelineTest, AnExitWaitsOutRefusedBatchesOnAnOpenStreamWithinTheExitTimeout) {
  MakePipeline();
  Produce(40);
  ASSERT_TRUE(Eventually([&] { return pipeline_->stats().batches_delivered.load() == 1; }));
  {
    std::lock_guard lock(collector_.mu);
    collector_.batches_overloaded = true;
  }
  for (int i = 0; i < 5; ++i) Produce(40);
  ASSERT_TRUE(Eventually([&] { return pipeline_->stats().batches_spilled.load() > 0; }));
  std::thread relief([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    std::lock_guard lock(collector_.mu);
    collector_.batches_overloaded = false;
  });
  // The stream opens each time, but every replayed batch is refused until relief: the exit keeps
  // replaying (after each hint) instead of giving up after the first refusal.
  pipeline_->Stop(std::chrono::milliseconds(5000));
  relief.join();
  EXPECT_EQ(collector_.correlation_ids, Expected());
  int refusals = 0;
  {
    std::lock_guard lock(collector_.mu);
    refusals = collector_.overload_refusals;
  }
  EXPECT_LE(refusals, 12) << "retried after each 200 ms hint, not in a tight loop";
}

TEST_F(EventPipelineTest, FullSpillDropsAndCountsButLaterBatchesStillDecode) {
  config_.spill_max_bytes = 600;  // room for about one small batch
  collector_.up = false;
  MakePipeline();
  for (int i = 0; i < 8; ++i) {
    Produce(40);
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  {
    std::lock_guard lock(collector_.mu);
    collector_.up = true;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // reconnect backoff
  Produce(40);
  pipeline_->Stop(std::chrono::milliseconds(3000));
  const uint64_t dropped = pipeline_->stats().spill_dropped_events.load();
  EXPECT_GT(dropped, 0u);
  // Received + dropped = produced: nothing vanishes uncounted.
  EXPECT_EQ(collector_.correlation_ids.size() + dropped, next_corr_ - 1);
  // The last batch arrived although earlier ones carrying its names were dropped.
  ASSERT_FALSE(collector_.correlation_ids.empty());
  EXPECT_EQ(collector_.correlation_ids.back(), next_corr_ - 1);
}

TEST_F(EventPipelineTest, RefusedBatchIsNotRetriedAndDoesNotBlockLaterOnes) {
  collector_.refuse_sequence = 1;
  MakePipeline();
  Produce(60);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Produce(60);
  pipeline_->Stop(std::chrono::milliseconds(2000));
  EXPECT_EQ(pipeline_->stats().batches_refused.load(), 1u);
  ASSERT_FALSE(collector_.correlation_ids.empty());
  EXPECT_EQ(collector_.correlation_ids.back(), next_corr_ - 1);
}

TEST_F(EventPipelineTest, StopIsBoundedWhenCollectorNeverAcks) {
  // Everything the stuck pipeline thread touches is leaked on purpose: Stop() detaches that
  // thread (the application's exit must not wait for it), so it may outlive this test body.
  auto* collector = new FakeCollector;
  collector->hang = true;
  auto* pool = new BufferPool(64 * 1024, 8);
  auto* completed = new CompletedBuffers;
  config_.ack_timeout_ms = 60'000;
  auto* pipeline = new EventPipeline(config_, Parser(), identity_,
                                     std::make_unique<FakeSink>(collector), pool, completed,
                                     [](bool) {}, [] { return uint64_t{0}; });
  pipeline->Start();
  uint8_t* buf = pool->Acquire();
  CUpti_ActivityAPI a{};
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.correlationId = 1;
  std::memcpy(buf, &a, sizeof(a));
  completed->Push({buf, sizeof(a)});
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the batch is now in flight
  const auto start = std::chrono::steady_clock::now();
  pipeline->Stop(std::chrono::milliseconds(300));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

}  // namespace
}  // namespace gpuspy::inject
