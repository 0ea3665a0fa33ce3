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

class IngestClient {
 public:
  IngestClient() = default;
  ~IngestClient();
  IngestClient(const IngestClient&) = delete;
  IngestClient& operator=(const IngestClient&) = delete;

  // Opens the stream, says Hello, waits for Welcome. Unavailable ("cannot reach gpuspyd at
  // ADDR: ...") when nothing answers within `timeout`.
  absl::Status Connect(const std::string& address, const v1::ProcessIdentity& identity,
                       absl::Duration timeout);
  uint64_t process_id() const { return welcome_.process_id(); }
  uint64_t last_stored_sequence() const { return welcome_.last_stored_sequence(); }

  // Writes one batch (does not wait for its Ack).
  absl::Status Send(const v1::EventBatch& batch);
  // Reads Acks until one for `sequence` (or later) arrives. DeadlineExceeded after `timeout`;
  // the server's status (e.g. InvalidArgument for a refused batch) when it ends the stream.
  absl::Status WaitForAcks(uint64_t sequence, absl::Duration timeout);
  // Acks received so far that said "already stored".
  uint64_t duplicate_acks() const { return duplicates_; }

  // Half-closes and collects the server's final status.
  absl::Status Close();

 private:
  absl::Status StreamEnded();
  // Reads one server message, giving up (and cancelling the stream) at `deadline`: synchronous
  // gRPC streams have no read timeout of their own. DeadlineExceeded on timeout; the stream's
  // final status when it ended.
  absl::Status ReadWithDeadline(std::chrono::system_clock::time_point deadline,
                                v1::ServerMessage* out);

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
