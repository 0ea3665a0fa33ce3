// Bad input against a real gpuspyd: each gets a clear gRPC status, is counted, and never costs
// what is already stored.
#include <signal.h>

#include <chrono>
#include <limits>
#include <string>
#include <thread>

#include <google/protobuf/descriptor.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/byte_buffer.h>
#include <gtest/gtest.h>
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/impl/rpc_method.h>

#include "codec/batch_encoder.h"
#include "gpuspy/v1/services.grpc.pb.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using Stream = grpc::ClientReaderWriter<v1::ClientMessage, v1::ServerMessage>;

class IngestBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start()) << daemon_.log();
    channel_ = grpc::CreateChannel(daemon_.address(), grpc::InsecureChannelCredentials());
    ingest_ = v1::Ingest::NewStub(channel_);
    query_ = v1::Query::NewStub(channel_);
  }

  // Opens a stream and says hello as `key`; returns the process id from Welcome.
  uint64_t Hello(grpc::ClientContext* ctx, std::unique_ptr<Stream>* stream,
                 const std::string& key = "proc-1") {
    *stream = ingest_->Stream(ctx);
    v1::ClientMessage hello;
    hello.mutable_hello()->mutable_identity()->set_process_key(key);
    hello.mutable_hello()->mutable_identity()->set_job_id("bad-input");
    hello.mutable_hello()->mutable_identity()->set_host("testhost");
    EXPECT_TRUE((*stream)->Write(hello));
    v1::ServerMessage welcome;
    EXPECT_TRUE((*stream)->Read(&welcome));
    EXPECT_TRUE(welcome.has_welcome());
    return welcome.welcome().process_id();
  }

  // A valid batch of `n` kernels with launch calls, encoded by the real encoder.
  v1::EventBatch ValidBatch(uint64_t sequence, int n) {
    EventColumns ev;
    const StringRef kernel = strings_.Intern("void gemm_kernel<float>(float*, float const*)");
    const StringRef launch = strings_.Intern("cudaLaunchKernel");
    for (int i = 0; i < n; ++i) {
      const int64_t t = 1'000'000 * static_cast<int64_t>(sequence) + 1000 * i;
      const uint64_t corr = sequence * 1000 + i;
      ev.apis.push_back({t, t + 5, corr, ApiDomain::kRuntime, 211, launch, 4242, 0});
      KernelEvent k;
      k.start_ns = t + 10;
      k.end_ns = t + 500;
      k.correlation_id = corr;
      k.name = kernel;
      k.stream = {0, 1, 7};
      ev.kernels.push_back(k);
    }
    v1::EventBatch batch;
    encoder_.Encode(ev, sequence, {}, &batch);
    return batch;
  }

  v1::CollectorStats Stats() {
    grpc::ClientContext ctx;
    v1::GetStatsResponse resp;
    EXPECT_TRUE(query_->GetStats(&ctx, {}, &resp).ok());
    return resp.stats();
  }

  uint64_t StoredEvents() {
    grpc::ClientContext ctx;
    v1::GetEventsRequest req;
    req.set_job_id("bad-input");
    v1::GetEventsResponse resp;
    grpc::Status st = query_->GetEvents(&ctx, req, &resp);
    if (!st.ok()) return 0;
    uint64_t n = 0;
    for (const auto& p : resp.processes()) n += p.events_size();
    return n;
  }

  // Stores one valid batch on its own stream and closes it cleanly.
  void StoreValid(uint64_t sequence, int kernels) {
    grpc::ClientContext ctx;
    std::unique_ptr<Stream> stream;
    Hello(&ctx, &stream);
    v1::ClientMessage m;
    *m.mutable_batch() = ValidBatch(sequence, kernels);
    ASSERT_TRUE(stream->Write(m));
    v1::ServerMessage ack;
    ASSERT_TRUE(stream->Read(&ack));
    stream->WritesDone();
    ASSERT_TRUE(stream->Finish().ok());
  }

  // Sends `batch` on a fresh stream; returns the status the server ends the stream with.
  grpc::Status SendOnFreshStream(const v1::EventBatch& bad) {
    grpc::ClientContext ctx;
    std::unique_ptr<Stream> stream;
    Hello(&ctx, &stream);
    v1::ClientMessage m;
    *m.mutable_batch() = bad;
    stream->Write(m);
    stream->WritesDone();
    v1::ServerMessage reply;
    while (stream->Read(&reply)) {
    }
    return stream->Finish();
  }

  testing::TempDir dir_;
  testing::Gpuspyd daemon_{
      {.binary = GPUSPYD_BIN, .dir = dir_.path(), .flags = {"--max-message-bytes", "1048576"}}};
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Ingest::Stub> ingest_;
  std::unique_ptr<v1::Query::Stub> query_;
  StringTable strings_;
  BatchEncoder encoder_{&strings_};
};

TEST_F(IngestBadInput, StoresValidBatchesAndAcksDuplicatesWithoutStoringTwice) {
  grpc::ClientContext ctx;
  std::unique_ptr<Stream> stream;
  Hello(&ctx, &stream);
  v1::ClientMessage m;
  *m.mutable_batch() = ValidBatch(1, 50);
  ASSERT_TRUE(stream->Write(m));
  v1::ServerMessage ack;
  ASSERT_TRUE(stream->Read(&ack));
  EXPECT_EQ(ack.ack().sequence(), 1u);
  EXPECT_FALSE(ack.ack().duplicate());
  ASSERT_TRUE(stream->Write(m));  // the same batch again, as after a reconnect
  ASSERT_TRUE(stream->Read(&ack));
  EXPECT_TRUE(ack.ack().duplicate());
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(StoredEvents(), 100u);
  EXPECT_EQ(Stats().batches_duplicate(), 1u);
}

TEST_F(IngestBadInput, UnknownRefsAreRejectedAndEarlierDataKept) {
  StoreValid(1, 20);
  v1::EventBatch bad = ValidBatch(2, 5);
  bad.mutable_kernels()->set_signature_ref(0, 999);  // never defined
  grpc::Status st = SendOnFreshStream(bad);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("kernels.signature_ref[0]"), std::string::npos)
      << st.error_message();
  EXPECT_EQ(StoredEvents(), 40u);
  EXPECT_EQ(Stats().batches_rejected(), 1u);
}

TEST_F(IngestBadInput, MismatchedColumnsAndZeroSequenceAreRejected) {
  v1::EventBatch ragged = ValidBatch(1, 5);
  ragged.mutable_kernels()->add_duration_ns(1);
  grpc::Status st = SendOnFreshStream(ragged);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("kernels.duration_ns"), std::string::npos);

  v1::EventBatch zero = ValidBatch(1, 5);
  zero.set_sequence(0);
  st = SendOnFreshStream(zero);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(StoredEvents(), 0u);
}

TEST_F(IngestBadInput, FirstMessageMustBeHello) {
  grpc::ClientContext ctx;
  auto stream = ingest_->Stream(&ctx);
  v1::ClientMessage m;
  *m.mutable_batch() = ValidBatch(1, 1);
  stream->Write(m);
  stream->WritesDone();
  v1::ServerMessage reply;
  EXPECT_FALSE(stream->Read(&reply));
  grpc::Status st = stream->Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(st.error_message().find("Hello"), std::string::npos);
}

// Bytes that do not parse as a ClientMessage ended the stream like a half-close: grpc-status OK,
// nothing logged. As the first message and after a valid Hello.
TEST_F(IngestBadInput, GarbageProtobufIsInvalidArgumentAndLogged) {
  using RawStream = grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>;
  auto raw = [](const std::string& bytes) {
    grpc::Slice slice(bytes);
    return grpc::ByteBuffer(&slice, 1);
  };
  v1::ClientMessage hello;
  hello.mutable_hello()->mutable_identity()->set_process_key("garbage");
  hello.mutable_hello()->mutable_identity()->set_job_id("bad-input");
  // A varint of 11 bytes (at most 10 are allowed), then a length past the end of the message.
  const std::string garbage[] = {std::string(10, '\xff') + "\x01", std::string("\x0a\xff\xff\x0f", 4)};
  for (bool after_hello : {false, true}) {
    for (const std::string& bytes : garbage) {
      grpc::ClientContext ctx;
      const grpc::internal::RpcMethod method("/gpuspy.v1.Ingest/Stream",
                                             grpc::internal::RpcMethod::BIDI_STREAMING, channel_);
      std::unique_ptr<RawStream> stream(
          grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
              channel_.get(), method, &ctx));
      if (after_hello) {
        ASSERT_TRUE(stream->Write(raw(hello.SerializeAsString())));
      }
      stream->Write(raw(bytes));
      stream->WritesDone();
      grpc::ByteBuffer reply;
      while (stream->Read(&reply)) {
      }
      const grpc::Status st = stream->Finish();
      EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
          << "after hello: " << after_hello << ": " << st.error_message();
      EXPECT_NE(st.error_message().find(after_hello ? "message 2 of the stream does not parse"
                                                    : "message 1 of the stream does not parse"),
                std::string::npos)
          << st.error_message();
    }
  }
  EXPECT_NE(testing::ReadFile(dir_.path() + "/gpuspyd.log").find("is not a gpuspy.v1.ClientMessage"),
            std::string::npos)
      << testing::ReadFile(dir_.path() + "/gpuspyd.log");
  StoreValid(1, 10);  // the daemon is unharmed
  EXPECT_EQ(StoredEvents(), 20u);
}

TEST_F(IngestBadInput, EmptyProcessKeyIsRejected) {
  grpc::ClientContext ctx;
  auto stream = ingest_->Stream(&ctx);
  v1::ClientMessage hello;
  hello.mutable_hello()->mutable_identity()->set_job_id("x");
  stream->Write(hello);
  stream->WritesDone();
  v1::ServerMessage reply;
  EXPECT_FALSE(stream->Read(&reply));
  grpc::Status st = stream->Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("process_key"), std::string::npos);
}

TEST_F(IngestBadInput, OversizedMessageIsRefusedAndDaemonStaysUp) {
  v1::EventBatch huge = ValidBatch(1, 10);
  huge.mutable_dictionary()->add_strings()->set_ref(100000);
  huge.mutable_dictionary()->mutable_strings()->rbegin()->set_value(std::string(2 << 20, 'x'));
  grpc::Status st = SendOnFreshStream(huge);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // Still serving.
  EXPECT_EQ(StoredEvents(), 0u);
  // The refused stream's handler may still be unwinding when the client has its status (seen
  // once under a parallel ctest): it must close, within a bound.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (Stats().streams_open() != 0u && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Stats().streams_open(), 0u);
}

TEST_F(IngestBadInput, ClientVanishingMidStreamKeepsAckedBatches) {
  {
    grpc::ClientContext ctx;
    std::unique_ptr<Stream> stream;
    Hello(&ctx, &stream);
    v1::ClientMessage m;
    *m.mutable_batch() = ValidBatch(1, 30);
    stream->Write(m);
    v1::ServerMessage ack;
    ASSERT_TRUE(stream->Read(&ack));
    ctx.TryCancel();  // vanish without WritesDone
  }
  // The daemon notices the cancelled stream asynchronously.
  for (int i = 0; i < 100 && Stats().streams_open() != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(Stats().streams_open(), 0u);
  EXPECT_EQ(StoredEvents(), 60u);
  // Reconnecting as the same process: Welcome tells what is stored already.
  grpc::ClientContext ctx;
  std::unique_ptr<Stream> stream;
  Hello(&ctx, &stream);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(IngestBadInput, SequenceGapsAreCountedAndReported) {
  grpc::ClientContext ctx;
  std::unique_ptr<Stream> stream;
  Hello(&ctx, &stream);
  for (uint64_t seq : {1, 2, 5}) {
    v1::ClientMessage m;
    *m.mutable_batch() = ValidBatch(seq, 3);
    ASSERT_TRUE(stream->Write(m));
    v1::ServerMessage ack;
    ASSERT_TRUE(stream->Read(&ack));
  }
  stream->WritesDone();
  ASSERT_TRUE(stream->Finish().ok());
  EXPECT_EQ(Stats().sequence_gaps(), 2u);
  grpc::ClientContext jctx;
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(query_->ListJobs(&jctx, {}, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 1);
  EXPECT_EQ(jobs.jobs(0).processes(0).sequence_gaps(), 2u);
}

// A batch numbered far beyond the last one (2^64-1 from any local producer) is refused: the gap
// counters stay what the real gaps make them, on the job and collector-wide.
TEST_F(IngestBadInput, ImplausibleSequenceJumpIsRefusedAndGapsStayTrue) {
  StoreValid(1, 3);
  for (uint64_t seq : {std::numeric_limits<uint64_t>::max(), uint64_t{1} + (uint64_t{1} << 20) + 1}) {
    grpc::Status st = SendOnFreshStream(ValidBatch(seq, 3));
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << seq;
    EXPECT_NE(st.error_message().find("jumps more than"), std::string::npos) << st.error_message();
  }
  StoreValid(4, 3);  // a plausible gap of two is stored and counted
  EXPECT_EQ(Stats().sequence_gaps(), 2u);
  EXPECT_EQ(Stats().batches_rejected(), 2u);
  EXPECT_EQ(StoredEvents(), 12u);  // two batches of 3 launches + 3 kernels
}

TEST_F(IngestBadInput, UnknownJobIsNotFound) {
  grpc::ClientContext ctx;
  v1::GetStepReportRequest req;
  req.set_job_id("missing");
  req.set_all(true);
  v1::GetStepReportResponse resp;
  grpc::Status st = query_->GetStepReport(&ctx, req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(st.error_message(), "unknown job 'missing'");
}

// Issue 34: gRPC's generated handlers answered INTERNAL with an empty message for a unary request
// that does not parse. Every unary method of every service, from the services' own descriptors.
TEST_F(IngestBadInput, UnparseableUnaryRequestIsInvalidArgumentWithAReason) {
  // A varint of 11 bytes (at most 10 are allowed).
  const std::string garbage = std::string(10, '\xff') + "\x01";
  int methods = 0;
  for (const char* name : {"gpuspy.v1.Query", "gpuspy.v1.Control", "gpuspy.v1.Ingest"}) {
    const google::protobuf::ServiceDescriptor* service =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int i = 0; i < service->method_count(); ++i) {
      const google::protobuf::MethodDescriptor* m = service->method(i);
      if (m->client_streaming() || m->server_streaming()) continue;
      ++methods;
      const std::string path = "/" + std::string(service->full_name()) + "/" + std::string(m->name());
      grpc::Slice slice(garbage);
      grpc::ByteBuffer request(&slice, 1);
      grpc::ByteBuffer response;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      // Blocking, on this thread: the callback API's completion raced its own cleanup under TSan.
      const grpc::internal::RpcMethod method(path.c_str(), grpc::internal::RpcMethod::NORMAL_RPC);
      const grpc::Status st = grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
          channel_.get(), method, &ctx, request, &response);
      EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << path << ": " << st.error_message();
      EXPECT_NE(st.error_message().find("does not parse"), std::string::npos) << path << ": " << st.error_message();
      EXPECT_NE(st.error_message().find(path), std::string::npos) << st.error_message();
    }
  }
  EXPECT_GE(methods, 16);  // Query's 13 and Control's 3, at least
  StoreValid(1, 10);  // the daemon is unharmed
  EXPECT_EQ(StoredEvents(), 20u);
}

}  // namespace
}  // namespace gpuspy
