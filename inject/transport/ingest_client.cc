#include "inject/transport/ingest_client.h"

#include <chrono>
#include <future>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"

namespace gpuspy {

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address) {
  grpc::ChannelArguments args;
  // Batches can be large; the server enforces its own limit.
  args.SetMaxSendMessageSize(64 << 20);
  args.SetMaxReceiveMessageSize(64 << 20);
  // Reconnect quickly after a collector restart instead of gRPC's default exponential backoff
  // of up to two minutes: the caller has its own backoff.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

IngestClient::~IngestClient() {
  if (stream_ != nullptr && !closed_) {
    context_->TryCancel();
    (void)stream_->Finish();
  }
}

absl::Status IngestClient::Connect(const std::string& address, const v1::ProcessIdentity& identity,
                                   absl::Duration timeout) {
  address_ = address;
  channel_ = MakeChannel(address);
  const auto deadline = std::chrono::system_clock::now() + absl::ToChronoNanoseconds(timeout);
  if (!channel_->WaitForConnected(deadline)) {
    return absl::UnavailableError(absl::StrCat("cannot reach gpuspyd at ", address,
                                               ": no answer within ", absl::FormatDuration(timeout)));
  }
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
      return absl::DeadlineExceededError(absl::StrCat("gpuspyd at ", address, " did not welcome us"));
    }
    return st;
  }
  if (!message.has_welcome()) {
    return absl::InternalError("gpuspyd answered Hello with something other than Welcome");
  }
  welcome_ = message.welcome();
  return absl::OkStatus();
}

absl::Status IngestClient::Send(const v1::EventBatch& batch) {
  if (stream_ == nullptr || closed_) return absl::FailedPreconditionError("not connected");
  v1::ClientMessage m;
  *m.mutable_batch() = batch;
  if (!stream_->Write(m)) return StreamEnded();
  return absl::OkStatus();
}

absl::Status IngestClient::WaitForAcks(uint64_t sequence, absl::Duration timeout) {
  if (stream_ == nullptr || closed_) return absl::FailedPreconditionError("not connected");
  const auto deadline = std::chrono::system_clock::now() + absl::ToChronoNanoseconds(timeout);
  while (highest_ack_ < sequence) {
    v1::ServerMessage message;
    if (absl::Status st = ReadWithDeadline(deadline, &message); !st.ok()) {
      if (absl::IsDeadlineExceeded(st)) {
        return absl::DeadlineExceededError(
            absl::StrCat("no acknowledgement for batch ", sequence, " from ", address_));
      }
      return st;
    }
    if (message.has_ack()) {
      highest_ack_ = std::max(highest_ack_, message.ack().sequence());
      if (message.ack().duplicate()) ++duplicates_;
    }
  }
  return absl::OkStatus();
}

absl::Status IngestClient::ReadWithDeadline(std::chrono::system_clock::time_point deadline,
                                            v1::ServerMessage* out) {
  auto reply = std::async(std::launch::async, [this] {
    v1::ServerMessage m;
    const bool ok = stream_->Read(&m);
    return std::make_pair(ok, m);
  });
  if (reply.wait_until(deadline) != std::future_status::ready) {
    context_->TryCancel();
    reply.wait();
    (void)stream_->Finish();
    closed_ = true;
    return absl::DeadlineExceededError("read timed out");
  }
  auto [ok, message] = reply.get();
  if (!ok) return StreamEnded();
  *out = std::move(message);
  return absl::OkStatus();
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

absl::Status IngestClient::Close() {
  if (stream_ == nullptr || closed_) return absl::OkStatus();
  stream_->WritesDone();
  closed_ = true;
  return FromGrpc(stream_->Finish());
}

}  // namespace gpuspy
