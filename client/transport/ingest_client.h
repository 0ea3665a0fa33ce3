// One process's ingest stream to gpuspyd (gpuspy.v1.Ingest/Stream). Used by the injected core's
// sender thread and by gpuspy-replay. No CUPTI, no process-global state, no output: callers
// decide what to log.
//
// Writes happen on the caller's thread. Reads happen on one reader thread per stream
// ("gpuspy-recv"): it files Acks and Commands as they arrive, so a process that is not sending
// anything (dormant) still hears an attach at once, and waiting for an Ack is a condition-variable
// wait with a deadline rather than a blocking gRPC read.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuspy/v1/services.grpc.pb.h"

namespace gpuspy {

// "host:port" or "unix:/path", with the token, TLS and peer name of
// ClientSecurityFromEnvironment() (channel_security.h); fails if those cannot be read.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address);

// grpc::Status -> absl::Status with the same code and message.
absl::Status FromGrpc(const grpc::Status& status);

// Trailing metadata of a RESOURCE_EXHAUSTED refusal from an overloaded collector: milliseconds to
// wait before trying again (collector/ingest/ingest_service.h writes the same key).
inline constexpr char kRetryAfterMetadataKey[] = "gpuspy-retry-after-ms";
// The collector's retry hint carried by a status this client returned; nullopt without one.
std::optional<absl::Duration> RetryAfter(const absl::Status& status);
// `status` carrying the retry hint `after` (what the client does with the trailing metadata).
absl::Status WithRetryAfter(absl::Status status, absl::Duration after);
// How long to stay away from a collector that refused us for overload: its hint (else
// `fallback`: a refusal by gRPC's own limits carries none), spread by +-50% jitter so refused
// producers do not all return at the same moment, and capped at `cap`.
absl::Duration OverloadBackoff(const absl::Status& status,
                               absl::Duration fallback = absl::Seconds(1),
                               absl::Duration cap = absl::Seconds(30));

// One sender thread owns it (everything but TakeCommands is called from that thread). Reusable: Connect again after a failure or Close
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
  // Said in the next Hello: whether this process traces all the time or waits for an attach.
  void set_mode(v1::CaptureMode mode) { mode_ = mode; }
  // False once the stream ended or failed (the reader saw its end): Connect again.
  bool connected() const;
  // From the Welcome. Read under the lock: the reader thread owns welcome_ and would overwrite it
  // if a (misbehaving) collector sent a second one.
  uint64_t process_id() const;
  uint64_t last_stored_sequence() const;

  // Writes one batch (does not wait for its Ack).
  absl::Status Send(const v1::EventBatch& batch);
  // Writes any other client message (heartbeat, capture status).
  absl::Status SendMessage(const v1::ClientMessage& message);
  // Commands the collector pushed since the last call, in order.
  std::vector<v1::Command> TakeCommands();
  // Reads Acks until one for `sequence` (or later) arrives. DeadlineExceeded after `timeout`;
  // the server's status (e.g. InvalidArgument for a refused batch) when it ends the stream.
  absl::Status WaitForAcks(uint64_t sequence, absl::Duration timeout);
  // Highest sequence acknowledged on this stream (0 before the first Ack).
  uint64_t highest_ack() const;
  // Acks received so far that said "already stored".
  uint64_t duplicate_acks() const;

  // Half-closes, reads what the server still sends, and returns its final status. A collector
  // that does not finish within `timeout` is cancelled (DeadlineExceeded): an application
  // exiting must never hang on its profiler.
  absl::Status Close(absl::Duration timeout = absl::Seconds(10));

 private:
  void Reset();
  void ReadLoop();
  // Waits until `done()` holds or the stream ended; false at `deadline` (the stream is then
  // cancelled and finished).
  template <typename Pred>
  bool WaitFor(std::chrono::system_clock::time_point deadline, Pred done);
  // Cancels the stream, joins the reader and collects the final status (once).
  grpc::Status Finish(bool cancel);
  absl::Status StreamEnded();
  absl::Status SayHello(const v1::ProcessIdentity& identity, absl::Duration timeout,
                        std::chrono::system_clock::time_point deadline);

  v1::CaptureMode mode_ = v1::CAPTURE_MODE_CONTINUOUS;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Ingest::Stub> stub_;
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::ClientMessage, v1::ServerMessage>> stream_;
  std::string address_;
  std::thread reader_;
  bool finished_ = false;
  grpc::Status final_status_;
  int64_t retry_after_ms_ = -1;  // the hint in the final status's trailing metadata

  // Filled by the reader thread.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool have_welcome_ = false;
  v1::Welcome welcome_;
  uint64_t highest_ack_ = 0;
  uint64_t duplicates_ = 0;
  std::vector<v1::Command> commands_;
  bool ended_ = false;  // the reader saw the end of the stream
};

}  // namespace gpuspy
