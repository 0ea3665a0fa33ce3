#include "collector/ingest/ingest_service.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collector/ingest/batch_bytes.h"
#include "collector/rpc/grpc_status.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/method_handler.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {

namespace {

using ServerStream = grpc::ServerReaderWriter<v1::ServerMessage, grpc::ByteBuffer>;

// Ingest has one method, Stream.
constexpr int kStreamMethodIndex = 0;

enum class ReadResult { kMessage, kClosed, kUnparsable };

// Reads the next message: its bytes as they arrived into `bytes` (a batch is stored as it came,
// batch_bytes.h) and their parse into `out`.
ReadResult ReadClientMessage(ServerStream* stream, v1::ClientMessage* out, std::string* bytes) {
  grpc::ByteBuffer raw;
  if (!stream->Read(&raw)) return ReadResult::kClosed;
  std::vector<grpc::Slice> slices;
  if (!raw.Dump(&slices).ok()) return ReadResult::kUnparsable;
  bytes->clear();
  bytes->reserve(raw.Length());
  for (const grpc::Slice& slice : slices) {
    bytes->append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  // Only one copy of a large batch in memory at a time.
  slices.clear();
  raw.Clear();
  if (!out->ParseFromString(*bytes)) return ReadResult::kUnparsable;
  return ReadResult::kMessage;
}

grpc::Status Unparsable(const std::string& peer, uint64_t messages_read) {
  spdlog::warn("ingest {}: message {} of the stream is not a gpuspy.v1.ClientMessage; stream refused",
               peer, messages_read + 1);
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                      absl::StrCat("message ", messages_read + 1,
                                   " of the stream does not parse as a gpuspy.v1.ClientMessage"));
}

// Writes to one stream from the handler (Acks) and from the capture manager (Commands): gRPC
// allows one writer at a time, and none once the handler has returned.
class StreamWriter {
 public:
  explicit StreamWriter(ServerStream* stream) : stream_(stream) {}
  bool Write(const v1::ServerMessage& message) {
    std::lock_guard lock(mu_);
    return stream_ != nullptr && stream_->Write(message);
  }
  void Detach() {
    std::lock_guard lock(mu_);
    stream_ = nullptr;
  }

 private:
  std::mutex mu_;
  ServerStream* stream_;
};

// Keeps the open-streams gauge and the registry right on every exit path.
class StreamScope {
 public:
  StreamScope(IngestCounters* counters, ConnectionRegistry* connections,
              std::shared_ptr<StreamWriter> writer)
      : counters_(counters), connections_(connections), writer_(std::move(writer)) {
    counters_->streams_open.fetch_add(1, std::memory_order_relaxed);
  }
  ~StreamScope() {
    writer_->Detach();
    counters_->streams_open.fetch_sub(1, std::memory_order_relaxed);
    if (process_id_ != 0) connections_->Closed(process_id_, token_);
  }
  void Register(uint64_t process_id, const v1::Hello& hello) {
    process_id_ = process_id;
    token_ = connections_->Opened(
        process_id, hello.identity(),
        hello.mode() == v1::CAPTURE_MODE_UNSPECIFIED ? v1::CAPTURE_MODE_CONTINUOUS : hello.mode(),
        [w = writer_](const v1::ServerMessage& m) { return w->Write(m); },
        absl::ToUnixNanos(absl::Now()));
  }

 private:
  IngestCounters* counters_;
  ConnectionRegistry* connections_;
  std::shared_ptr<StreamWriter> writer_;
  uint64_t process_id_ = 0;
  uint64_t token_ = 0;
};

// Tells the ingestor that a stream which said Hello ended, on every way out: an import stays
// pending unless Complete() ran (its producer closed the stream after its last batch).
class HelloScope {
 public:
  HelloScope(BatchIngestor* ingestor, uint64_t process_id, const v1::ProcessIdentity& identity)
      : ingestor_(ingestor), process_id_(process_id), identity_(identity) {}
  ~HelloScope() {
    if (!ended_) (void)ingestor_->EndStream(process_id_, identity_, false);
  }
  absl::Status End(bool complete) {
    ended_ = true;
    return ingestor_->EndStream(process_id_, identity_, complete);
  }

 private:
  BatchIngestor* ingestor_;
  uint64_t process_id_;
  const v1::ProcessIdentity& identity_;
  bool ended_ = false;
};

// RESOURCE_EXHAUSTED with the retry hint: the producer keeps what was not acknowledged (its spill)
// and comes back after the hint, with jitter.
grpc::Status Refuse(grpc::ServerContext* context, const StreamAdmission::Refusal& refusal) {
  context->AddTrailingMetadata(kRetryAfterMetadataKey,
                               std::to_string(absl::ToInt64Milliseconds(refusal.retry_after)));
  return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, refusal.message);
}

}  // namespace

IngestService::IngestService(BatchIngestor* ingestor, ConnectionRegistry* connections,
                             IngestCounters* counters)
    : ingestor_(ingestor), connections_(connections), counters_(counters) {
  MarkMethodStreamed(kStreamMethodIndex,
                     new grpc::internal::BidiStreamingHandler<IngestService, grpc::ByteBuffer,
                                                              v1::ServerMessage>(
                         [](IngestService* service, grpc::ServerContext* context,
                            ServerStream* stream) { return service->RawStream(context, stream); },
                         this));
}

grpc::Status IngestService::RawStream(grpc::ServerContext* context, ServerStream* stream) {
  auto writer = std::make_shared<StreamWriter>(stream);
  StreamScope scope(counters_, connections_, writer);
  const std::string peer = context->peer();
  if (gate_ != nullptr) {
    if (grpc::Status st = gate_->AdmitStream(context); !st.ok()) return st;
  }
  v1::ClientMessage in;
  std::string bytes;
  uint64_t messages_read = 0;
  switch (ReadClientMessage(stream, &in, &bytes)) {
    case ReadResult::kClosed: return grpc::Status::OK;  // closed before saying anything
    case ReadResult::kUnparsable: return Unparsable(peer, messages_read);
    case ReadResult::kMessage: ++messages_read; break;
  }
  if (!in.has_hello()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "the first message of an ingest stream must be Hello");
  }
  v1::Hello hello = in.hello();
  if (gate_ != nullptr) {
    if (grpc::Status st = gate_->AdmitProcess(context, hello.mutable_identity()); !st.ok()) {
      spdlog::warn("ingest {}: hello refused: {}", peer, st.error_message());
      return st;
    }
  }
  absl::StatusOr<v1::Welcome> welcome =
      ingestor_->Hello(hello.identity(), absl::ToUnixNanos(absl::Now()));
  if (!welcome.ok()) {
    spdlog::warn("ingest {}: hello refused: {}", peer, welcome.status().ToString());
    return ToGrpc(welcome.status());
  }
  const uint64_t process_id = welcome->process_id();
  HelloScope hello_scope(ingestor_, process_id, hello.identity());
  StreamAdmission admission(admission_, ledger_, peer, process_id);
  if (std::optional<StreamAdmission::Refusal> refused = admission.OpenStream()) {
    return Refuse(context, *refused);
  }
  spdlog::info("ingest {}: process {} ({} pid {} job {}{}) connected", peer, process_id,
               hello.identity().host(), hello.identity().pid(), hello.identity().job_id(),
               hello.mode() == v1::CAPTURE_MODE_DORMANT ? ", dormant" : "");
  v1::ServerMessage out;
  *out.mutable_welcome() = *welcome;
  if (!writer->Write(out)) return grpc::Status::OK;
  // Registered only now: an attach waiting for this process must not overtake its Welcome.
  scope.Register(process_id, hello);

  for (;;) {
    admission.AwaitRoom();
    const ReadResult read = ReadClientMessage(stream, &in, &bytes);
    if (read == ReadResult::kClosed) break;
    if (read == ReadResult::kUnparsable) return Unparsable(peer, messages_read);
    ++messages_read;
    switch (in.body_case()) {
      case v1::ClientMessage::kBatch: {
        if (std::optional<StreamAdmission::Refusal> refused = admission.ReserveBatch(in.batch())) {
          return Refuse(context, *refused);
        }
        const uint64_t sequence = in.batch().sequence();
        absl::StatusOr<v1::Ack> ack =
            TakeBatchBytes(&bytes) ? ingestor_->Ingest(process_id, in.batch(), std::move(bytes))
                                   : ingestor_->Ingest(process_id, in.batch());
        // The batch's memory goes with its reservation (Clear would keep its capacity).
        v1::ClientMessage().Swap(&in);
        std::string().swap(bytes);
        admission.ReleaseBatch();
        if (!ack.ok()) {
          spdlog::warn("ingest {}: process {} batch {} refused: {}", peer, process_id,
                       sequence, ack.status().ToString());
          return ToGrpc(ack.status());
        }
        out.Clear();
        *out.mutable_ack() = *ack;
        if (!writer->Write(out)) {
          counters_->Add(counters_->streams_aborted);
          return grpc::Status::OK;
        }
        break;
      }
      case v1::ClientMessage::kHeartbeat:
        connections_->Heartbeat(process_id, in.heartbeat(), absl::ToUnixNanos(absl::Now()));
        break;
      case v1::ClientMessage::kCaptureStatus:
        // Kept per live process and shown to `gpuspy attach`: a one-line note, not a payload.
        if (in.capture_status().message().size() > kMaxIdentityStringBytes) {
          in.mutable_capture_status()->mutable_message()->resize(kMaxIdentityStringBytes);
        }
        connections_->CaptureStatus(process_id, in.capture_status(), absl::ToUnixNanos(absl::Now()));
        break;
      case v1::ClientMessage::kHello:
        return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                            "Hello may only be sent once per stream");
      case v1::ClientMessage::BODY_NOT_SET:
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "empty client message");
    }
  }
  const bool closed = !context->IsCancelled();
  if (!closed) {
    counters_->Add(counters_->streams_aborted);
    spdlog::info("ingest {}: process {} disconnected mid-stream", peer, process_id);
  } else {
    spdlog::info("ingest {}: process {} closed its stream", peer, process_id);
  }
  // Before the status goes out: an import is listed once its sender hears the stream ended well.
  return ToGrpc(hello_scope.End(closed));
}

}  // namespace gpuspy::collector
