// TakeBatchBytes: the EventBatch bytes a ClientMessage carried, exactly as they were in it.
#include "collector/ingest/batch_bytes.h"

#include <gtest/gtest.h>

#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::collector {
namespace {

// A field of a message, by hand: tag, then the length-delimited bytes.
std::string LengthDelimited(int field, const std::string& bytes) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.WriteTag(static_cast<uint32_t>(field << 3 | 2));
    coded.WriteVarint32(static_cast<uint32_t>(bytes.size()));
    coded.WriteString(bytes);
  }
  return out;
}

// Batch bytes no serializer writes: the sequence after the loss counters, field order reversed.
std::string UnusualBatchBytes() {
  v1::EventBatch loss_only;
  loss_only.mutable_loss()->set_cupti_dropped_records(3);
  return loss_only.SerializeAsString() + std::string("\x08\x07", 2);  // sequence = 7
}

TEST(TakeBatchBytes, GivesTheBatchFieldsBytesUnchanged) {
  const std::string batch = UnusualBatchBytes();
  std::string message = LengthDelimited(v1::ClientMessage::kBatchFieldNumber, batch);
  v1::ClientMessage parsed;
  ASSERT_TRUE(parsed.ParseFromString(message));
  ASSERT_NE(parsed.batch().SerializeAsString(), batch) << "the case must be one re-serializing changes";

  ASSERT_TRUE(TakeBatchBytes(&message));
  EXPECT_EQ(message, batch);
}

TEST(TakeBatchBytes, SkipsOtherFieldsAroundTheBatch) {
  const std::string batch = UnusualBatchBytes();
  v1::ClientMessage hello;
  hello.mutable_hello()->mutable_identity()->set_process_key("p");
  // A Hello first (the batch replaces it in the oneof), an unknown field after.
  std::string message = hello.SerializeAsString() +
                        LengthDelimited(v1::ClientMessage::kBatchFieldNumber, batch) +
                        LengthDelimited(99, "unknown");
  v1::ClientMessage parsed;
  ASSERT_TRUE(parsed.ParseFromString(message));
  ASSERT_TRUE(parsed.has_batch());
  ASSERT_TRUE(TakeBatchBytes(&message));
  EXPECT_EQ(message, batch);
}

TEST(TakeBatchBytes, RefusesABatchSplitOverTwoFieldsAndLeavesTheMessage) {
  v1::EventBatch first;
  first.set_sequence(4);
  v1::EventBatch second;
  second.mutable_loss()->set_cupti_dropped_records(1);
  // Protobuf merges the two: no one span of bytes is the batch.
  const std::string message =
      LengthDelimited(v1::ClientMessage::kBatchFieldNumber, first.SerializeAsString()) +
      LengthDelimited(v1::ClientMessage::kBatchFieldNumber, second.SerializeAsString());
  std::string taken = message;
  EXPECT_FALSE(TakeBatchBytes(&taken));
  EXPECT_EQ(taken, message);
}

TEST(TakeBatchBytes, RefusesTruncatedMessagesAndMessagesWithoutABatch) {
  std::string truncated =
      LengthDelimited(v1::ClientMessage::kBatchFieldNumber, UnusualBatchBytes()).substr(0, 5);
  EXPECT_FALSE(TakeBatchBytes(&truncated));
  v1::ClientMessage heartbeat;
  heartbeat.mutable_heartbeat()->set_client_time_ns(5);
  std::string no_batch = heartbeat.SerializeAsString();
  EXPECT_FALSE(TakeBatchBytes(&no_batch));
  EXPECT_EQ(no_batch, heartbeat.SerializeAsString());
}

}  // namespace
}  // namespace gpuspy::collector
