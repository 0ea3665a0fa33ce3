// IngestClient against an in-process fake of gpuspyd's Ingest service: the Hello/Welcome
// handshake, Acks, the server's errors coming back with their message, and every way a
// collector can fail to answer ending in a prompt, clear status instead of a hang.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "client/transport/ingest_client.h"
#include "codec/batch_encoder.h"
#include "gpuspy/v1/services.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using Clock = std::chrono::steady_clock;

// What the fake collector does after Hello.
struct FakeBehavior {
  uint64_t process_id = 42;
  uint64_t last_stored_sequence = 0;
  bool welcome = true;             // false: never answers Hello (a wedged collector)
  bool ack = true;                 // false: swallows batches without acknowledging them
  bool command_before_acks = false;
  bool linger_after_writes_done = false;  // does not end the stream when the client half-closes
  bool welcome_twice = false;      // repeats the Welcome a moment later (a misbehaving collector)
  uint64_t refuse_sequence = 0;    // this batch ends the stream with INVALID_ARGUMENT
  // This batch ends the stream as an overloaded gpuspyd does: RESOURCE_EXHAUSTED and a retry hint
  // (-1: none); with overload_hello, the Hello does.
  uint64_t overload_sequence = 0;
  bool overload_hello = false;
  int retry_after_ms = -1;
};

class FakeIngest final : public v1::Ingest::Service {
 public:
  explicit FakeIngest(FakeBehavior behavior) : behavior_(behavior) {}

  grpc::Status Stream(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::ServerMessage, v1::ClientMessage>* stream) override {
    v1::ClientMessage in;
    if (!stream->Read(&in) || !in.has_hello()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "expected Hello first");
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      hellos_.push_back(in.hello().identity());
    }
    if (behavior_.overload_hello) return Overloaded(context);
    if (!behavior_.welcome) return WaitForCancel(context);
    v1::ServerMessage welcome;
    welcome.mutable_welcome()->set_process_id(behavior_.process_id);
    welcome.mutable_welcome()->set_last_stored_sequence(behavior_.last_stored_sequence);
    welcome.mutable_welcome()->set_collector_version("fake");
    stream->Write(welcome);
    if (behavior_.welcome_twice) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      stream->Write(welcome);
      second_welcome_sent_.store(true);
    }
    while (stream->Read(&in)) {
      if (!in.has_batch()) continue;
      const uint64_t sequence = in.batch().sequence();
      {
        std::lock_guard<std::mutex> lock(mu_);
        sequences_.push_back(sequence);
      }
      if (sequence == behavior_.refuse_sequence) {
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            "batch " + std::to_string(sequence) + " refused: kernels column is short");
      }
      if (sequence == behavior_.overload_sequence) return Overloaded(context);
      if (!behavior_.ack) continue;
      if (behavior_.command_before_acks) {
        v1::ServerMessage command;
        command.mutable_command()->set_command_id(sequence);
        command.mutable_command()->mutable_stop_capture();
        stream->Write(command);
      }
      v1::ServerMessage ack;
      ack.mutable_ack()->set_sequence(sequence);
      ack.mutable_ack()->set_duplicate(sequence <= behavior_.last_stored_sequence);
      stream->Write(ack);
    }
    if (behavior_.linger_after_writes_done) return WaitForCancel(context);
    return grpc::Status::OK;
  }

  std::vector<v1::ProcessIdentity> hellos() const {
    std::lock_guard<std::mutex> lock(mu_);
    return hellos_;
  }
  std::vector<uint64_t> sequences() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sequences_;
  }
  bool second_welcome_sent() const { return second_welcome_sent_.load(); }

 private:
  grpc::Status Overloaded(grpc::ServerContext* context) const {
    if (behavior_.retry_after_ms >= 0) {
      context->AddTrailingMetadata(kRetryAfterMetadataKey, std::to_string(behavior_.retry_after_ms));
    }
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "gpuspyd is overloaded");
  }

  static grpc::Status WaitForCancel(grpc::ServerContext* context) {
    while (!context->IsCancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return grpc::Status(grpc::StatusCode::CANCELLED, "client gave up");
  }

  const FakeBehavior behavior_;
  mutable std::mutex mu_;
  std::vector<v1::ProcessIdentity> hellos_;
  std::vector<uint64_t> sequences_;
  std::atomic<bool> second_welcome_sent_{false};
};

// A fake collector listening on `listen` ("127.0.0.1:0" picks a free port).
class FakeCollector {
 public:
  explicit FakeCollector(FakeBehavior behavior = {}, const std::string& listen = "127.0.0.1:0")
      : service_(behavior) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    address_ = listen.starts_with("unix:") ? listen : "127.0.0.1:" + std::to_string(port);
  }
  ~FakeCollector() { Stop(); }

  void Stop() {
    if (server_ == nullptr) return;
    // Handlers parked in WaitForCancel are cancelled by the deadline.
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_->Wait();
    server_.reset();
  }

  bool started() const { return server_ != nullptr; }
  const std::string& address() const { return address_; }
  const FakeIngest& service() const { return service_; }

 private:
  FakeIngest service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

v1::ProcessIdentity Identity() {
  v1::ProcessIdentity id;
  id.set_process_key("host-a:1234:1700000000");
  id.set_job_id("unit");
  id.set_host("host-a");
  id.set_pid(1234);
  id.set_rank(3);
  id.set_world_size(8);
  id.set_source("test");
  auto* dev = id.add_devices();
  dev->set_name("NVIDIA H100 80GB HBM3");
  dev->set_sm_count(132);
  return id;
}

// Real encoded batches (not empty messages), so what travels is what the core sends.
std::vector<v1::EventBatch> Batches(uint64_t first_sequence, int count) {
  static StringTable strings;
  BatchEncoder encoder(&strings);
  std::vector<v1::EventBatch> out;
  for (int i = 0; i < count; ++i) {
    EventColumns ev;
    KernelEvent k;
    k.start_ns = 1'000'000 * (i + 1);
    k.end_ns = k.start_ns + 5000;
    k.correlation_id = static_cast<uint64_t>(i + 1);
    k.name = strings.Intern("ampere_sgemm_128x64_tn");
    k.stream = {0, 1, 7};
    ev.kernels.push_back(k);
    encoder.Encode(ev, first_sequence + i, {}, &out.emplace_back());
  }
  return out;
}

// A port nobody listens on: bound by a server that is then shut down.
std::string DeadAddress() {
  FakeCollector gone;
  const std::string address = gone.address();
  gone.Stop();
  return address;
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TEST(IngestClient, HelloIsAnsweredWithWelcome) {
  FakeBehavior behavior;
  behavior.process_id = 77;
  behavior.last_stored_sequence = 0;
  FakeCollector collector(behavior);
  ASSERT_TRUE(collector.started());

  IngestClient client;
  ASSERT_TRUE(client.Connect(collector.address(), Identity(), absl::Seconds(5)).ok());
  EXPECT_TRUE(client.connected());
  EXPECT_EQ(client.process_id(), 77u);
  EXPECT_EQ(client.last_stored_sequence(), 0u);
  EXPECT_TRUE(client.Close().ok());
  EXPECT_FALSE(client.connected());

  ASSERT_EQ(collector.service().hellos().size(), 1u);
  const v1::ProcessIdentity seen = collector.service().hellos()[0];
  EXPECT_EQ(seen.process_key(), "host-a:1234:1700000000");
  EXPECT_EQ(seen.rank(), 3);
  EXPECT_EQ(seen.devices(0).name(), "NVIDIA H100 80GB HBM3");
}

// The reader thread files every Welcome it reads; the sender thread reads the Welcome's fields
// at the same time. Under ThreadSanitizer (scripts/test.sh TSAN=1) this fails if those reads are
// not under the client's lock.
TEST(IngestClient, WelcomeFieldsAreSafeToReadWhileTheReaderFilesAnother) {
  FakeBehavior behavior;
  behavior.process_id = 77;
  behavior.last_stored_sequence = 5;
  behavior.welcome_twice = true;
  FakeCollector collector(behavior);
  ASSERT_TRUE(collector.started());
  IngestClient client;
  ASSERT_TRUE(client.Connect(collector.address(), Identity(), absl::Seconds(5)).ok());
  // Keep reading until the second Welcome has certainly been filed (the reader files it right
  // after the server wrote it), without any other call that takes the client's lock.
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  std::optional<Clock::time_point> seen_sent;
  while (Clock::now() < give_up &&
         (!seen_sent || Clock::now() < *seen_sent + std::chrono::milliseconds(100))) {
    EXPECT_EQ(client.process_id(), 77u);
    EXPECT_EQ(client.last_stored_sequence(), 5u);
    if (!seen_sent && collector.service().second_welcome_sent()) seen_sent = Clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(collector.service().second_welcome_sent());
  EXPECT_TRUE(client.Close(absl::Seconds(5)).ok());
}

TEST(IngestClient, BatchesAreAcknowledgedInOrder) {
  FakeCollector collector;
  IngestClient client;
  ASSERT_TRUE(client.Connect(collector.address(), Identity(), absl::Seconds(5)).ok());
  for (const v1::EventBatch& b : Batches(1, 3)) ASSERT_TRUE(client.Send(b).ok());
  ASSERT_TRUE(client.WaitForAcks(3, absl::Seconds(5)).ok());
  EXPECT_EQ(client.highest_ack(), 3u);
  EXPECT_EQ(client.duplicate_acks(), 0u);
  EXPECT_TRUE(client.Close().ok());
  EXPECT_THAT(collector.service().sequences(), ElementsAre(1, 2, 3));
}

TEST(IngestClient, UnacknowledgedBatchesAreDrainedByClose) {
  FakeCollector collector;
  IngestClient client;
  ASSERT_TRUE(client.Connect(collector.address(), Identity(), absl::Seconds(5)).ok());
  for (const v1::EventBatch& b : Batches(1, 4)) ASSERT_TRUE(client.Send(b).ok());
  EXPECT_TRUE(client.Close().ok());
  EXPECT_EQ(client.highest_ack(), 4u);
}

TEST(IngestClient, CommandsBetweenAcksDoNotDisturbTheWait) {
  FakeBehavior behavior;
  behavior.command_before_acks = true;
  FakeCollector collector(behavior);
  IngestClient client;
  ASSERT_TRUE(client.Connect(collector.address(), Identity(), absl::Seconds(5)).ok());
  for (const v1::EventBatch& b : Batches(1, 2)) ASSERT_TRUE(client.Send(b).ok());
  EXPECT_TRUE(client.WaitForAcks(2, absl::Seconds(5)).ok());
  EXPECT_TRUE(client.Close().ok());
}

TEST(IngestClient, ResumedStreamCountsDuplicateAcks) {
  FakeBehavior behavior;
  behavior.last_stored_sequence = 2;
  FakeCollector collector(behavior);
  IngestClient client;
  ASSERT_TRUE(client.Connect(collector.address(), Identity(), absl::Seconds(5)).ok());
  EXPECT_EQ(client.last_stored_sequence(), 2u);
  for (const v1::EventBatch& b : Batches(2, 2)) ASSERT_TRUE(client.Send(b).ok());
  ASSERT_TRUE(client.WaitForAcks(3, absl::Seconds(5)).ok());
  EXPECT_EQ(client.duplicate_acks(), 1u);
  EXPECT_TRUE(client.Close().ok());
}

TEST(IngestClient, RefusedBatchReturnsTheServersCodeAndMessage) {
  FakeBehavior behavior;
  behavior.refuse_sequence = 2;
  FakeCollector collector(behavior);
  IngestClient client;
  ASSERT_TRUE(client.Connect(collector.address(), Identity(), absl::Seconds(5)).ok());
  for (const v1::EventBatch& b : Batches(1, 2)) ASSERT_TRUE(client.Send(b).ok());
  const absl::Status st = client.WaitForAcks(2, absl::Seconds(5));
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("batch 2 refused: kernels column is short"));
  EXPECT_FALSE(client.connected());
  EXPECT_EQ(client.Send(Batches(3, 1)[0]).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(client.Close().ok());  // nothing left to close
}

TEST(IngestClient, OverloadRefusalCarriesTheRetryHint) {
  FakeBehavior behavior;
  behavior.overload_sequence = 2;
  behavior.retry_after_ms = 1500;
  FakeCollector collector(behavior);
  IngestClient client;
  ASSERT_TRUE(client.Connect(collector.address(), Identity(), absl::Seconds(5)).ok());
  for (const v1::EventBatch& b : Batches(1, 2)) ASSERT_TRUE(client.Send(b).ok());
  const absl::Status st = client.WaitForAcks(2, absl::Seconds(5));
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted) << st;
  ASSERT_TRUE(RetryAfter(st).has_value()) << st;
  EXPECT_EQ(*RetryAfter(st), absl::Milliseconds(1500));
  EXPECT_EQ(client.highest_ack(), 1u) << "the refused batch is not acknowledged: it is kept";
  // The backoff honours the hint with jitter, within the cap.
  for (int i = 0; i < 50; ++i) {
    const absl::Duration d = OverloadBackoff(st, absl::Seconds(1), absl::Seconds(30));
    EXPECT_GE(d, absl::Milliseconds(750));
    EXPECT_LE(d, absl::Milliseconds(2250));
    EXPECT_LE(OverloadBackoff(st, absl::Seconds(1), absl::Seconds(1)), absl::Seconds(1));
  }
}

TEST(IngestClient, RefusedHelloIsResourceExhaustedAndAHintlessOneUsesTheFallback) {
  FakeBehavior behavior;
  behavior.overload_hello = true;
  FakeCollector collector(behavior);
  IngestClient client;
  const absl::Status st = client.Connect(collector.address(), Identity(), absl::Seconds(5));
  EXPECT_EQ(st.code(), absl::StatusCode::kResourceExhausted) << st;
  EXPECT_FALSE(RetryAfter(st).has_value());
  const absl::Duration d = OverloadBackoff(st, absl::Seconds(2), absl::Seconds(30));
  EXPECT_GE(d, absl::Seconds(1));
  EXPECT_LE(d, absl::Seconds(3));
  // Jittered: producers refused together do not come back together.
  bool differ = false;
  for (int i = 0; i < 20 && !differ; ++i) {
    differ = OverloadBackoff(st, absl::Seconds(2), absl::Seconds(30)) != d;
  }
  EXPECT_TRUE(differ);
}

TEST(IngestClient, DeadPortIsUnavailableQuickly) {
  const std::string address = DeadAddress();
  IngestClient client;
  const auto start = Clock::now();
  const absl::Status st = client.Connect(address, Identity(), absl::Seconds(10));
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
  EXPECT_THAT(std::string(st.message()), StartsWith("cannot reach gpuspyd at " + address + ": "));
  // A refused connection is known at once; the timeout is for addresses that never answer.
  EXPECT_LT(SecondsSince(start), 3.0);
  EXPECT_FALSE(client.connected());
}

TEST(IngestClient, MissingUnixSocketIsUnavailableQuickly) {
  const std::string address =
      "unix:" + (std::filesystem::temp_directory_path() / "gpuspy-no-such-collector.sock").string();
  IngestClient client;
  const auto start = Clock::now();
  const absl::Status st = client.Connect(address, Identity(), absl::Seconds(10));
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
  EXPECT_THAT(std::string(st.message()), StartsWith("cannot reach gpuspyd at " + address));
  EXPECT_LT(SecondsSince(start), 3.0);
}

TEST(IngestClient, UnixSocketAddressWorks) {
  const std::filesystem::path socket =
      std::filesystem::temp_directory_path() /
      ("gpuspy-ingest-client-test-" + std::to_string(::getpid()) + ".sock");
  std::filesystem::remove(socket);
  FakeCollector collector({}, "unix:" + socket.string());
  ASSERT_TRUE(collector.started());
  IngestClient client;
  ASSERT_TRUE(client.Connect(collector.address(), Identity(), absl::Seconds(5)).ok());
  ASSERT_TRUE(client.Send(Batches(1, 1)[0]).ok());
  EXPECT_TRUE(client.WaitForAcks(1, absl::Seconds(5)).ok());
  EXPECT_TRUE(client.Close().ok());
  collector.Stop();
  std::filesystem::remove(socket);
}

TEST(IngestClient, SilentCollectorTimesOutInsteadOfHanging) {
  FakeBehavior behavior;
  behavior.welcome = false;
  FakeCollector collector(behavior);
  IngestClient client;
  const auto start = Clock::now();
  const absl::Status st = client.Connect(collector.address(), Identity(), absl::Milliseconds(300));
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("did not answer Hello"));
  EXPECT_LT(SecondsSince(start), 3.0);
  EXPECT_FALSE(client.connected());
}

TEST(IngestClient, MissingAckTimesOut) {
  FakeBehavior behavior;
  behavior.ack = false;
  FakeCollector collector(behavior);
  IngestClient client;
  ASSERT_TRUE(client.Connect(collector.address(), Identity(), absl::Seconds(5)).ok());
  ASSERT_TRUE(client.Send(Batches(1, 1)[0]).ok());
  const auto start = Clock::now();
  const absl::Status st = client.WaitForAcks(1, absl::Milliseconds(200));
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  EXPECT_THAT(std::string(st.message()), HasSubstr("no acknowledgement for batch 1"));
  EXPECT_LT(SecondsSince(start), 3.0);
  EXPECT_FALSE(client.connected());
}

TEST(IngestClient, CloseGivesUpOnACollectorThatNeverFinishes) {
  FakeBehavior behavior;
  behavior.linger_after_writes_done = true;
  FakeCollector collector(behavior);
  IngestClient client;
  ASSERT_TRUE(client.Connect(collector.address(), Identity(), absl::Seconds(5)).ok());
  const auto start = Clock::now();
  const absl::Status st = client.Close(absl::Milliseconds(200));
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  EXPECT_LT(SecondsSince(start), 3.0);
}

TEST(IngestClient, ReusableAfterFailureAndAfterClose) {
  IngestClient client;
  EXPECT_EQ(client.Connect(DeadAddress(), Identity(), absl::Seconds(5)).code(),
            absl::StatusCode::kUnavailable);
  FakeCollector collector;
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(client.Connect(collector.address(), Identity(), absl::Seconds(5)).ok()) << round;
    EXPECT_EQ(client.highest_ack(), 0u);
    ASSERT_TRUE(client.Send(Batches(1, 1)[0]).ok());
    EXPECT_TRUE(client.WaitForAcks(1, absl::Seconds(5)).ok());
    EXPECT_TRUE(client.Close().ok());
  }
  EXPECT_EQ(collector.service().hellos().size(), 2u);
}

TEST(IngestClient, SendBeforeConnectIsAPreconditionError) {
  IngestClient client;
  EXPECT_EQ(client.Send(v1::EventBatch()).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(client.WaitForAcks(1, absl::Seconds(1)).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(client.Close().ok());
}

}  // namespace
}  // namespace gpuspy
