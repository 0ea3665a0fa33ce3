#include "inject/transport/ingest_client.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <utility>

#include "absl/strings/str_cat.h"
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

}  // namespace

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address) {
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
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

IngestClient::~IngestClient() { Reset(); }

void IngestClient::Reset() {
  if (stream_ != nullptr && !closed_) {
    context_->TryCancel();
    (void)stream_->Finish();
  }
  // The stream refers to the context: destroy it first.
  stream_.reset();
  context_.reset();
  stub_.reset();
  channel_.reset();
  welcome_.Clear();
  highest_ack_ = 0;
  duplicates_ = 0;
  closed_ = false;
}

absl::Status IngestClient::Connect(const std::string& address, const v1::ProcessIdentity& identity,
                                   absl::Duration timeout) {
  Reset();
  address_ = address;
  channel_ = MakeChannel(address);
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
  v1::ClientMessage hello;
  *hello.mutable_hello()->mutable_identity() = identity;
  if (!stream_->Write(hello)) return StreamEnded();
  // A wedged server must not hang the caller.
  v1::ServerMessage message;
  if (absl::Status st = ReadWithDeadline(deadline, &message); !st.ok()) {
    if (absl::IsDeadlineExceeded(st)) {
      return absl::DeadlineExceededError(absl::StrCat("gpuspyd at ", address,
                                                      " did not answer Hello within ",
                                                      absl::FormatDuration(timeout)));
    }
    return st;
  }
  if (!message.has_welcome()) {
    Reset();
    return absl::InternalError("gpuspyd answered Hello with something other than Welcome");
  }
  welcome_ = message.welcome();
  return absl::OkStatus();
}

absl::Status IngestClient::Send(const v1::EventBatch& batch) {
  if (!connected()) return absl::FailedPreconditionError("not connected");
  v1::ClientMessage m;
  *m.mutable_batch() = batch;
  if (!stream_->Write(m)) return StreamEnded();
  return absl::OkStatus();
}

absl::Status IngestClient::WaitForAcks(uint64_t sequence, absl::Duration timeout) {
  if (!connected()) return absl::FailedPreconditionError("not connected");
  const auto deadline = DeadlineAfter(timeout);
  while (highest_ack_ < sequence) {
    v1::ServerMessage message;
    if (absl::Status st = ReadWithDeadline(deadline, &message); !st.ok()) {
      if (absl::IsDeadlineExceeded(st)) {
        return absl::DeadlineExceededError(
            absl::StrCat("no acknowledgement for batch ", sequence, " from gpuspyd at ", address_,
                         " within ", absl::FormatDuration(timeout)));
      }
      return st;
    }
    CountAck(message);
  }
  return absl::OkStatus();
}

void IngestClient::CountAck(const v1::ServerMessage& message) {
  // Commands (StartCapture/StopCapture) are not this client's business yet; skipping them keeps
  // an Ack wait from failing when the collector sends one.
  if (!message.has_ack()) return;
  highest_ack_ = std::max(highest_ack_, message.ack().sequence());
  if (message.ack().duplicate()) ++duplicates_;
}

IngestClient::ReadOutcome IngestClient::ReadOnce(std::chrono::system_clock::time_point deadline,
                                                 v1::ServerMessage* out) {
  auto reply = std::async(std::launch::async, [this] {
    v1::ServerMessage m;
    const bool ok = stream_->Read(&m);
    return std::make_pair(ok, std::move(m));
  });
  if (reply.wait_until(deadline) != std::future_status::ready) {
    context_->TryCancel();
    reply.wait();
    (void)stream_->Finish();
    closed_ = true;
    return ReadOutcome::kTimedOut;
  }
  auto [ok, message] = reply.get();
  if (!ok) return ReadOutcome::kEnded;
  *out = std::move(message);
  return ReadOutcome::kMessage;
}

absl::Status IngestClient::ReadWithDeadline(std::chrono::system_clock::time_point deadline,
                                            v1::ServerMessage* out) {
  switch (ReadOnce(deadline, out)) {
    case ReadOutcome::kMessage: return absl::OkStatus();
    case ReadOutcome::kEnded: return StreamEnded();
    case ReadOutcome::kTimedOut: break;
  }
  return absl::DeadlineExceededError("read timed out");
}

absl::Status IngestClient::StreamEnded() {
  closed_ = true;
  grpc::Status st = stream_->Finish();
  if (st.ok()) return absl::UnavailableError(absl::StrCat("gpuspyd at ", address_, " closed the stream"));
  if (st.error_code() == grpc::StatusCode::UNAVAILABLE) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach gpuspyd at ", address_, ": ", st.error_message()));
  }
  return FromGrpc(st);
}

absl::Status IngestClient::Close(absl::Duration timeout) {
  if (!connected()) return absl::OkStatus();
  const auto deadline = DeadlineAfter(timeout);
  (void)stream_->WritesDone();  // a broken stream says why in Finish
  // Acks still in flight are read here, so Finish sees a drained stream and its real status.
  for (;;) {
    v1::ServerMessage message;
    const ReadOutcome r = ReadOnce(deadline, &message);
    if (r == ReadOutcome::kEnded) break;
    if (r == ReadOutcome::kTimedOut) {
      return absl::DeadlineExceededError(absl::StrCat("gpuspyd at ", address_,
                                                      " did not end the stream within ",
                                                      absl::FormatDuration(timeout)));
    }
    CountAck(message);
  }
  closed_ = true;
  return FromGrpc(stream_->Finish());
}

}  // namespace gpuspy
