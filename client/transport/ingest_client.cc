#include "client/transport/ingest_client.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <pthread.h>
#include <random>

#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/transport/channel_security.h"
#include "grpcpp/create_channel.h"

namespace gpuspy {
namespace {

std::chrono::system_clock::time_point DeadlineAfter(absl::Duration timeout) {
  return std::chrono::system_clock::now() + absl::ToChronoNanoseconds(timeout);
}

// Waits until the channel's first connection attempt has an outcome. False when none came by
// `deadline` (a black-holed address: no refusal ever arrives).
bool WaitForConnectOutcome(grpc::Channel& channel, std::chrono::system_clock::time_point deadline) {
  grpc_connectivity_state state = channel.GetState(/*try_to_connect=*/true);
  while (state != GRPC_CHANNEL_READY && state != GRPC_CHANNEL_TRANSIENT_FAILURE &&
         state != GRPC_CHANNEL_SHUTDOWN) {
    if (!channel.WaitForStateChange(state, deadline)) return false;
    state = channel.GetState(/*try_to_connect=*/true);
  }
  return true;
}

// The payload of an absl::Status that carries the collector's retry hint.
constexpr char kRetryAfterPayload[] = "gpuspy/retry-after-ms";

}  // namespace

std::optional<absl::Duration> RetryAfter(const absl::Status& status) {
  const auto payload = status.GetPayload(kRetryAfterPayload);  // absl::optional on Debian
  int64_t ms = 0;
  if (!payload.has_value() || !absl::SimpleAtoi(std::string(*payload), &ms) || ms < 0) {
    return std::nullopt;
  }
  return absl::Milliseconds(ms);
}

absl::Status WithRetryAfter(absl::Status status, absl::Duration after) {
  status.SetPayload(kRetryAfterPayload, absl::Cord(absl::StrCat(absl::ToInt64Milliseconds(after))));
  return status;
}

absl::Duration OverloadBackoff(const absl::Status& status, absl::Duration fallback,
                               absl::Duration cap) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const absl::Duration base = RetryAfter(status).value_or(fallback);
  const double spread = std::uniform_real_distribution<double>(0.5, 1.5)(rng);
  return std::min(base * spread, cap);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address) {
  absl::StatusOr<ClientSecurity> security = ClientSecurityFromEnvironment();
  if (!security.ok()) return security.status();
  grpc::ChannelArguments args;
  // Batches can be large; the server enforces its own limit.
  args.SetMaxSendMessageSize(64 << 20);
  args.SetMaxReceiveMessageSize(64 << 20);
  // Reconnect quickly after a collector restart instead of gRPC's default exponential backoff
  // of up to two minutes: the caller has its own backoff.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // gRPC shares subchannels between channels process-wide; a fresh channel would inherit the
  // failed subchannel (and its backoff) of the previous attempt and report the collector down
  // for up to a second after it came back. Each Connect gets its own connection instead.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return CreateClientChannel(address, *security, std::move(args));
}

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

IngestClient::~IngestClient() { Reset(); }

bool IngestClient::connected() const {
  std::lock_guard lock(mu_);
  return stream_ != nullptr && !finished_ && !ended_;
}

uint64_t IngestClient::process_id() const {
  std::lock_guard lock(mu_);
  return welcome_.process_id();
}

uint64_t IngestClient::last_stored_sequence() const {
  std::lock_guard lock(mu_);
  return welcome_.last_stored_sequence();
}

uint64_t IngestClient::highest_ack() const {
  std::lock_guard lock(mu_);
  return highest_ack_;
}

uint64_t IngestClient::duplicate_acks() const {
  std::lock_guard lock(mu_);
  return duplicates_;
}

std::vector<v1::Command> IngestClient::TakeCommands() {
  std::lock_guard lock(mu_);
  std::vector<v1::Command> out;
  out.swap(commands_);
  return out;
}

grpc::Status IngestClient::Finish(bool cancel) {
  if (stream_ == nullptr || finished_) return final_status_;
  if (cancel) context_->TryCancel();
  // The reader returns once the stream has ended (cancelled or not): Read then yields false.
  if (reader_.joinable()) reader_.join();
  final_status_ = stream_->Finish();
  finished_ = true;
  const auto& trailers = context_->GetServerTrailingMetadata();
  if (auto it = trailers.find(kRetryAfterMetadataKey); it != trailers.end()) {
    int64_t ms = 0;
    if (absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()), &ms)) {
      retry_after_ms_ = ms;
    }
  }
  return final_status_;
}

void IngestClient::Reset() {
  if (stream_ != nullptr) (void)Finish(/*cancel=*/true);
  // The stream refers to the context: destroy it first.
  stream_.reset();
  context_.reset();
  stub_.reset();
  channel_.reset();
  finished_ = false;
  final_status_ = grpc::Status::OK;
  retry_after_ms_ = -1;
  std::lock_guard lock(mu_);
  have_welcome_ = false;
  welcome_.Clear();
  highest_ack_ = 0;
  duplicates_ = 0;
  commands_.clear();
  ended_ = false;
}

void IngestClient::ReadLoop() {
  pthread_setname_np(pthread_self(), "gpuspy-recv");
  v1::ServerMessage m;
  while (stream_->Read(&m)) {
    std::lock_guard lock(mu_);
    switch (m.body_case()) {
      case v1::ServerMessage::kWelcome:
        welcome_ = m.welcome();
        have_welcome_ = true;
        break;
      case v1::ServerMessage::kAck:
        highest_ack_ = std::max(highest_ack_, m.ack().sequence());
        if (m.ack().duplicate()) ++duplicates_;
        break;
      case v1::ServerMessage::kCommand:
        commands_.push_back(m.command());
        break;
      case v1::ServerMessage::BODY_NOT_SET:
        break;
    }
    cv_.notify_all();
  }
  std::lock_guard lock(mu_);
  ended_ = true;
  cv_.notify_all();
}

template <typename Pred>
bool IngestClient::WaitFor(std::chrono::system_clock::time_point deadline, Pred done) {
  std::unique_lock lock(mu_);
  if (cv_.wait_until(lock, deadline, [&] { return done() || ended_; })) return true;
  lock.unlock();
  (void)Finish(/*cancel=*/true);
  return false;
}

absl::Status IngestClient::Connect(const std::string& address, const v1::ProcessIdentity& identity,
                                   absl::Duration timeout) {
  Reset();
  address_ = address;
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = MakeChannel(address);
  if (!channel.ok()) return channel.status();
  channel_ = *std::move(channel);
  const auto deadline = DeadlineAfter(timeout);
  if (!WaitForConnectOutcome(*channel_, deadline)) {
    return absl::UnavailableError(absl::StrCat("cannot reach gpuspyd at ", address,
                                               ": no answer within ", absl::FormatDuration(timeout)));
  }
  // On a refused connection we still open the stream: it fails at once, and its status carries
  // gRPC's reason ("Connection refused", "No such file or directory"), which the channel state
  // alone does not.
  stub_ = v1::Ingest::NewStub(channel_);
  context_ = std::make_unique<grpc::ClientContext>();
  stream_ = stub_->Stream(context_.get());
  reader_ = std::thread([this] { ReadLoop(); });
  return SayHello(identity, timeout, deadline);
}

absl::Status IngestClient::SayHello(const v1::ProcessIdentity& identity, absl::Duration timeout,
                                    std::chrono::system_clock::time_point deadline) {
  v1::ClientMessage hello;
  *hello.mutable_hello()->mutable_identity() = identity;
  hello.mutable_hello()->set_mode(mode_);
  if (!stream_->Write(hello)) return StreamEnded();
  // A wedged server must not hang the caller.
  if (!WaitFor(deadline, [this] { return have_welcome_; })) {
    return absl::DeadlineExceededError(absl::StrCat("gpuspyd at ", address_,
                                                    " did not answer Hello within ",
                                                    absl::FormatDuration(timeout)));
  }
  std::unique_lock lock(mu_);
  if (!have_welcome_) {
    lock.unlock();
    return StreamEnded();
  }
  return absl::OkStatus();
}

absl::Status IngestClient::Send(const v1::EventBatch& batch) {
  v1::ClientMessage m;
  *m.mutable_batch() = batch;
  return SendMessage(m);
}

absl::Status IngestClient::SendMessage(const v1::ClientMessage& message) {
  if (!connected()) return absl::FailedPreconditionError("not connected");
  if (!stream_->Write(message)) return StreamEnded();
  return absl::OkStatus();
}

absl::Status IngestClient::WaitForAcks(uint64_t sequence, absl::Duration timeout) {
  if (stream_ == nullptr || finished_) return absl::FailedPreconditionError("not connected");
  const auto deadline = DeadlineAfter(timeout);
  if (!WaitFor(deadline, [&] { return highest_ack_ >= sequence; })) {
    return absl::DeadlineExceededError(absl::StrCat("no acknowledgement for batch ", sequence,
                                                    " from gpuspyd at ", address_, " within ",
                                                    absl::FormatDuration(timeout)));
  }
  std::unique_lock lock(mu_);
  if (highest_ack_ >= sequence) return absl::OkStatus();
  lock.unlock();
  return StreamEnded();
}

absl::Status IngestClient::StreamEnded() {
  const grpc::Status st = Finish(/*cancel=*/false);
  if (st.ok()) return absl::UnavailableError(absl::StrCat("gpuspyd at ", address_, " closed the stream"));
  if (st.error_code() == grpc::StatusCode::UNAVAILABLE) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach gpuspyd at ", address_, ": ", st.error_message()));
  }
  if (retry_after_ms_ >= 0) return WithRetryAfter(FromGrpc(st), absl::Milliseconds(retry_after_ms_));
  return FromGrpc(st);
}

absl::Status IngestClient::Close(absl::Duration timeout) {
  if (!connected()) return absl::OkStatus();
  const auto deadline = DeadlineAfter(timeout);
  (void)stream_->WritesDone();  // a broken stream says why in Finish
  // Acks still in flight are read by the reader; the server ends the stream after them.
  if (!WaitFor(deadline, [] { return false; })) {
    return absl::DeadlineExceededError(absl::StrCat("gpuspyd at ", address_,
                                                    " did not end the stream within ",
                                                    absl::FormatDuration(timeout)));
  }
  return FromGrpc(Finish(/*cancel=*/false));
}

}  // namespace gpuspy
