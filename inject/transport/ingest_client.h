// One process's ingest stream to gpuspyd (gpuspy.v1.Ingest/Stream), synchronous. Used by the
// injected core's sender thread and by gpuspy-replay. No CUPTI, no process-global state, no
// output: callers decide what to log.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gpuspy/v1/services.grpc.pb.h"

namespace gpuspy {

// "host:port" or "unix:/path".
std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address);

// grpc::Status -> absl::Status with the same code and message.
absl::Status FromGrpc(const grpc::Status& status);

// Not thread-safe: one sender thread owns it. Reusable: Connect again after a failure or Close
// opens a fresh stream on a fresh channel.
class IngestClient {
 public:
  IngestClient() = default;
  ~IngestClient();
  IngestClient(const IngestClient&) = delete;
  IngestClient& operator=(const IngestClient&) = delete;

  // Opens the stream, says Hello, waits for Welcome. Unavailable ("cannot reach gpuspyd at
  // ADDR: ...") as soon as the connection is refused, or when nothing answers within `timeout`;
  // DeadlineExceeded when the collector accepts the stream but sends no Welcome in time.
  absl::Status Connect(const std::string& address, const v1::ProcessIdentity& identity,
                       absl::Duration timeout);
  bool connected() const { return stream_ != nullptr && !closed_; }
  uint64_t process_id() const { return welcome_.process_id(); }
  uint64_t last_stored_sequence() const { return welcome_.last_stored_sequence(); }

  // Writes one batch (does not wait for its Ack).
  absl::Status Send(const v1::EventBatch& batch);
  // Reads Acks until one for `sequence` (or later) arrives. DeadlineExceeded after `timeout`;
  // the server's status (e.g. InvalidArgument for a refused batch) when it ends the stream.
  absl::Status WaitForAcks(uint64_t sequence, absl::Duration timeout);
  // Highest sequence acknowledged on this stream (0 before the first Ack).
  uint64_t highest_ack() const { return highest_ack_; }
  // Acks received so far that said "already stored".
  uint64_t duplicate_acks() const { return duplicates_; }

  // Half-closes, reads what the server still sends, and returns its final status. A collector
  // that does not finish within `timeout` is cancelled (DeadlineExceeded): an application
  // exiting must never hang on its profiler.
  absl::Status Close(absl::Duration timeout = absl::Seconds(10));

 private:
  enum class ReadOutcome { kMessage, kEnded, kTimedOut };

  void Reset();
  absl::Status StreamEnded();
  // Reads one server message, giving up (and cancelling the stream) at `deadline`: synchronous
  // gRPC streams have no read timeout of their own.
  ReadOutcome ReadOnce(std::chrono::system_clock::time_point deadline, v1::ServerMessage* out);
  // ReadOnce as a status: DeadlineExceeded on timeout; the stream's final status when it ended.
  absl::Status ReadWithDeadline(std::chrono::system_clock::time_point deadline,
                                v1::ServerMessage* out);
  void CountAck(const v1::ServerMessage& message);

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Ingest::Stub> stub_;
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::ClientMessage, v1::ServerMessage>> stream_;
  std::string address_;
  v1::Welcome welcome_;
  uint64_t highest_ack_ = 0;
  uint64_t duplicates_ = 0;
  bool closed_ = false;
};

}  // namespace gpuspy
