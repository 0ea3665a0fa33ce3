// The ingest service stores each batch as its producer sent it: the store holds the very bytes
// that came over the stream (store.h's contract), not a re-serialized copy, and what reads them
// back decodes the same events. gpuspyd's real IngestService, in-process, fed raw bytes.
#include "collector/ingest/ingest_service.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "codec/batch_decoder.h"
#include "codec/batch_encoder.h"
#include "collector/ingest/batch_ingestor.h"
#include "collector/storage/dictionary_cache.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/byte_buffer.h"
#include "tests/support/subprocess.h"

namespace gpuspy::collector {
namespace {

using RawStream = grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>;

grpc::ByteBuffer Raw(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// A ClientMessage carrying `batch_bytes` as its batch field, written by hand.
std::string BatchMessage(const std::string& batch_bytes) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.WriteTag(v1::ClientMessage::kBatchFieldNumber << 3 | 2);
    coded.WriteVarint32(static_cast<uint32_t>(batch_bytes.size()));
    coded.WriteString(batch_bytes);
  }
  return out;
}

class IngestServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EmbeddedStoreOptions o;
    o.data_dir = dir_.path() + "/store";
    store_ = *OpenEmbeddedStore(o);
    dictionaries_ = std::make_unique<DictionaryCache>(store_.get());
    ingestor_ = std::make_unique<BatchIngestor>(store_.get(), dictionaries_.get(), &counters_,
                                                analysis::StepSegmenter());
    service_ = std::make_unique<IngestService>(ingestor_.get(), &connections_, &counters_);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                   grpc::InsecureChannelCredentials());
  }
  void TearDown() override { server_->Shutdown(std::chrono::system_clock::now()); }

  // Sends hello, then each of `messages` (serialized ClientMessages) waiting for its ack; returns
  // the process id.
  uint64_t Send(const std::vector<std::string>& messages) {
    grpc::ClientContext ctx;
    const grpc::internal::RpcMethod method("/gpuspy.v1.Ingest/Stream",
                                           grpc::internal::RpcMethod::BIDI_STREAMING, channel_);
    std::unique_ptr<RawStream> stream(
        grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
            channel_.get(), method, &ctx));
    v1::ClientMessage hello;
    hello.mutable_hello()->mutable_identity()->set_process_key("bytes:1");
    hello.mutable_hello()->mutable_identity()->set_job_id("bytes");
    EXPECT_TRUE(stream->Write(Raw(hello.SerializeAsString())));
    v1::ServerMessage welcome = ReadReply(stream.get());
    EXPECT_TRUE(welcome.has_welcome());
    for (const std::string& m : messages) {
      EXPECT_TRUE(stream->Write(Raw(m)));
      const v1::ServerMessage ack = ReadReply(stream.get());
      EXPECT_TRUE(ack.has_ack()) << ack.DebugString();
      EXPECT_FALSE(ack.ack().duplicate());
    }
    stream->WritesDone();
    EXPECT_TRUE(stream->Finish().ok());
    return welcome.welcome().process_id();
  }

  static v1::ServerMessage ReadReply(RawStream* stream) {
    grpc::ByteBuffer raw;
    v1::ServerMessage reply;
    if (stream->Read(&raw)) {
      EXPECT_TRUE(grpc::SerializationTraits<v1::ServerMessage>::Deserialize(&raw, &reply).ok());
    }
    return reply;
  }

  // A real batch of `kernels` kernels, encoded by the producers' encoder.
  v1::EventBatch Batch(uint64_t sequence, int kernels) {
    EventColumns ev;
    for (int k = 0; k < kernels; ++k) {
      const int64_t t = static_cast<int64_t>(sequence) * 1'000'000 + k * 10'000;
      ev.kernels.push_back({t, t + 5'000, sequence * 100 + static_cast<uint64_t>(k),
                            strings_.Intern("gemm_" + std::to_string(k % 3)), {0, 1, 7}, {}, 0});
    }
    v1::EventBatch batch;
    encoder_.Encode(ev, sequence, {}, &batch);
    return batch;
  }

  // The process's stored batches, decoded with its stored dictionary: the kernels' names.
  std::vector<std::string> StoredKernelNames(uint64_t process) {
    absl::StatusOr<v1::Dictionary> defs = store_->LoadDictionary(process);
    absl::StatusOr<std::vector<StoredBatch>> stored = store_->ReadBatches(process, 0, 0);
    if (!defs.ok() || !stored.ok()) {
      ADD_FAILURE() << defs.status() << " " << stored.status();
      return {};
    }
    ProcessDictionary dict;
    EXPECT_TRUE(dict.Apply(*defs).ok());
    std::vector<std::string> names;
    for (const StoredBatch& b : *stored) {
      v1::EventBatch batch;
      EXPECT_TRUE(batch.ParseFromString(b.payload));
      EventColumns ev;
      EXPECT_TRUE(DecodeBatch(batch, dict, &ev).ok());
      for (const KernelEvent& k : ev.kernels) names.emplace_back(dict.strings().Get(k.name));
    }
    return names;
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<DictionaryCache> dictionaries_;
  IngestCounters counters_;
  ConnectionRegistry connections_;
  std::unique_ptr<BatchIngestor> ingestor_;
  std::unique_ptr<IngestService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  StringTable strings_;
  BatchEncoder encoder_{&strings_};
};

TEST_F(IngestServiceTest, StoredBytesAreTheBytesSent) {
  // The sequence written last: bytes a re-serialization would change (it writes field 1 first).
  std::vector<std::string> sent;
  for (uint64_t sequence : {1, 2}) {
    v1::EventBatch batch = Batch(sequence, 5);
    batch.clear_sequence();
    std::string bytes = batch.SerializeAsString() + static_cast<char>(0x08) +
                        static_cast<char>(sequence);
    v1::EventBatch parsed;
    ASSERT_TRUE(parsed.ParseFromString(bytes));
    ASSERT_NE(parsed.SerializeAsString(), bytes);
    sent.push_back(bytes);
  }
  const uint64_t process = Send({BatchMessage(sent[0]), BatchMessage(sent[1])});

  absl::StatusOr<std::vector<StoredBatch>> stored = store_->ReadBatches(process, 0, 0);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ((*stored)[i].sequence, i + 1);
    EXPECT_EQ((*stored)[i].payload, sent[i]) << "batch " << i + 1 << " is not stored as it was sent";
    EXPECT_EQ((*stored)[i].event_count, 5u);
  }
  EXPECT_EQ(counters_.bytes_stored.load(), sent[0].size() + sent[1].size());
  EXPECT_EQ(StoredKernelNames(process),
            (std::vector<std::string>{"gemm_0", "gemm_1", "gemm_2", "gemm_0", "gemm_1", "gemm_0",
                                      "gemm_1", "gemm_2", "gemm_0", "gemm_1"}));
}

TEST_F(IngestServiceTest, ABatchSplitOverTwoFieldsIsStoredMerged) {
  // Legal protobuf no gpuspy producer writes: the second field merges into the first.
  const v1::EventBatch batch = Batch(1, 4);
  v1::EventBatch head = batch;
  head.clear_kernels();
  v1::EventBatch tail;
  *tail.mutable_kernels() = batch.kernels();
  const uint64_t process = Send({BatchMessage(head.SerializeAsString()) +
                                 BatchMessage(tail.SerializeAsString())});

  absl::StatusOr<std::vector<StoredBatch>> stored = store_->ReadBatches(process, 0, 0);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 1u);
  v1::EventBatch merged = head;
  merged.MergeFrom(tail);
  EXPECT_EQ((*stored)[0].payload, merged.SerializeAsString());
  EXPECT_EQ(StoredKernelNames(process),
            (std::vector<std::string>{"gemm_0", "gemm_1", "gemm_2", "gemm_0"}));
}

}  // namespace
}  // namespace gpuspy::collector
