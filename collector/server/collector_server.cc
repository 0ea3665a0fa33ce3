#include "collector/server/collector_server.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collector/live/forget_gone_processes.h"
#include "collector/rpc/bad_request_interceptor.h"
#include "collector/server/data_dir_lock.h"
#include "collector/storage/postgres_store.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/server_builder.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

// Threads beyond the ingest streams: queries, control, and streams being refused.
constexpr int kNonIngestThreads = 64;
// gRPC's own buffers (HTTP/2 frames, messages not yet read) on top of the ingest budget.
constexpr uint64_t kGrpcBufferHeadroomBytes = 64ull << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<CollectorServer>> CollectorServer::Start(
    const ServerOptions& options) {
  std::unique_ptr<CollectorServer> s(new CollectorServer(options));
  if (options.listen.empty() && options.unix_socket.empty()) {
    return absl::InvalidArgumentError("nothing to listen on: both --listen and --unix are empty");
  }
  // Security first: a listener it would refuse must not wait behind opening the store.
  absl::StatusOr<std::unique_ptr<CollectorSecurity>> security =
      CollectorSecurity::Create(options.security, options.listen, options.http);
  if (!security.ok()) return security.status();
  s->security_ = std::move(*security);
  analysis::StepSegmenter segmenter(options.step_pattern);
  if (!segmenter.valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--step-pattern '", options.step_pattern, "' is not a valid regex"));
  }
  // Before the store: a socket held by a live daemon is refused without touching anything.
  if (!options.unix_socket.empty()) {
    if (absl::Status st = PrepareUnixSocketDir(options.unix_socket, options.security.unix_shared);
        !st.ok()) {
      return st;
    }
    absl::StatusOr<std::unique_ptr<UnixSocketOwner>> owner =
        UnixSocketOwner::Acquire(options.unix_socket);
    if (!owner.ok()) return owner.status();
    s->socket_owner_ = std::move(*owner);
  }

  absl::StatusOr<std::unique_ptr<Store>> store;
  if (!options.postgres.empty()) {
    // The hub store: no data dir; the store's schema lock keeps one daemon per database.
    PostgresStoreOptions store_options;
    store_options.conninfo = options.postgres;
    store_options.compress = options.compress_segments;
    store = OpenPostgresStore(store_options);
  } else {
    absl::StatusOr<int> lock_fd = LockDataDir(options.data_dir);
    if (!lock_fd.ok()) return lock_fd.status();
    s->data_dir_lock_fd_ = *lock_fd;
    EmbeddedStoreOptions store_options;
    store_options.data_dir = options.data_dir;
    store_options.segment_max_bytes = options.segment_bytes;
    store_options.fsync_each_batch = options.fsync_each_batch;
    store_options.compress = options.compress_segments;
    store = OpenEmbeddedStore(store_options);
  }
  if (!store.ok()) return store.status();
  s->store_ = std::move(*store);
  s->dictionaries_ = std::make_unique<DictionaryCache>(s->store_.get());
  s->ingestor_ = std::make_unique<BatchIngestor>(s->store_.get(), s->dictionaries_.get(),
                                                 &s->counters_, std::move(segmenter),
                                                 &s->versions_);
  s->engine_ = std::make_unique<QueryEngine>(s->store_.get(), s->dictionaries_.get(),
                                             &s->counters_, &s->connections_, &s->versions_);
  // One object for both: a job's pattern set through the Query service is what the next batch of
  // that job is indexed with.
  s->step_patterns_ = std::make_unique<JobStepPatterns>(s->store_.get(), options.step_pattern);
  s->ingestor_->set_job_patterns(s->step_patterns_.get());
  s->ingestor_->set_memory_totals(&s->memory_totals_);
  s->engine_->set_memory_totals(&s->memory_totals_);
  s->engine_->set_job_patterns(s->step_patterns_.get());
  s->ingest_service_ =
      std::make_unique<IngestService>(s->ingestor_.get(), &s->connections_, &s->counters_);
  s->query_service_ = std::make_unique<QueryService>(s->engine_.get());
  s->captures_ = std::make_unique<CaptureManager>(
      &s->connections_, options.step_pattern, [store = s->store_.get()](const std::string& job) {
        absl::StatusOr<std::vector<ProcessRecord>> known = store->ListProcesses(job);
        return known.ok() ? known->size() : size_t{0};
      });
  s->captures_->set_job_step_pattern([patterns = s->step_patterns_.get(), fallback = options.step_pattern](const std::string& job) {
    absl::StatusOr<std::shared_ptr<const analysis::StepSegmenter>> own = patterns->For(job);
    return own.ok() ? (*own)->pattern() : fallback;
  });
  s->connections_.set_observer(s->captures_.get());
  s->control_service_ = std::make_unique<ControlService>(s->captures_.get());
  s->security_->Attach(s->store_.get(), &s->tcp_port_);
  s->ingest_service_->set_gate(s->security_->ingest_gate());
  AdmissionOptions admission;
  admission.max_streams = options.max_ingest_streams;
  admission.memory_bytes = options.ingest_memory_mb << 20;
  admission.max_wait = absl::Milliseconds(options.ingest_wait_ms);
  s->admission_ = std::make_unique<IngestAdmission>(admission, &s->counters_);
  s->ingest_service_->set_admission(s->admission_.get(), &s->overload_);
  s->engine_->set_overload_ledger(&s->overload_);
  s->engine_->set_cache_budget(options.analysis_cache_mb << 20);
  if (!options.forward_to.empty()) {
    ForwarderOptions fo;
    fo.hub = options.forward_to;
    s->forwarder_ = std::make_unique<Forwarder>(s->store_.get(), &s->connections_, fo);
    s->engine_->set_stats_source(
        [f = s->forwarder_.get()](v1::CollectorStats* out) { f->FillProto(out->mutable_forward()); });
  }

  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default: a second daemon would silently share the port and
  // receive half of the producers. Fail instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(256 << 20);
  // A backstop under IngestAdmission: gRPC's threads (one per open call in this synchronous
  // server) and its buffers are bounded too, so a flood of connections that never get as far as
  // our admission cannot exhaust the daemon. Past the thread bound gRPC itself answers
  // RESOURCE_EXHAUSTED, which producers treat like our refusals.
  grpc::ResourceQuota quota("gpuspyd");
  quota.SetMaxThreads(static_cast<int>(std::min<size_t>(options.max_ingest_streams, 1 << 20)) +
                      kNonIngestThreads);
  quota.Resize(static_cast<size_t>(admission.memory_bytes * 2 + kGrpcBufferHeadroomBytes));
  builder.SetResourceQuota(quota);
  s->security_->Configure(&builder);  // unix-socket peer credentials
  if (!options.listen.empty()) {
    builder.AddListeningPort(options.listen, s->security_->TcpCredentials(), &s->tcp_port_);
  }
  if (!options.unix_socket.empty()) {
    builder.AddListeningPort("unix:" + options.unix_socket, grpc::InsecureServerCredentials());
    s->unix_socket_ = options.unix_socket;
  }
  {
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
    interceptors.push_back(MakeBadRequestInterceptorFactory());
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
  }
  builder.RegisterService(s->ingest_service_.get());
  builder.RegisterService(s->security_->Wrap(s->query_service_.get()));
  builder.RegisterService(s->security_->Wrap(s->control_service_.get()));
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || (!options.listen.empty() && s->tcp_port_ == 0)) {
    // gRPC reports only that some port failed; a TCP port it bound is known by its number.
    const bool tcp_failed = !options.listen.empty() && s->tcp_port_ == 0;
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", tcp_failed ? options.listen : "unix:" + options.unix_socket,
        " (address in use or not permitted?)"));
  }
  if (s->socket_owner_ != nullptr) {
    if (absl::Status st = s->socket_owner_->Bound(); !st.ok()) return st;
  }
  if (!options.unix_socket.empty() && options.security.unix_shared) {
    if (absl::Status st = OpenUnixSocketToAll(options.unix_socket); !st.ok()) return st;
  }
  if (!options.http.empty()) {
    HttpApiOptions http_options;
    http_options.tls_cert = options.security.tls_cert;
    http_options.tls_key = options.security.tls_key;
    http_options.connections.max_connections = options.http_max_connections;
    http_options.connections.max_connections_per_peer = options.http_max_connections_per_peer;
    http_options.connections.request_read_timeout =
        std::chrono::milliseconds(options.http_request_timeout_ms);
    http_options.admit = [gate = &s->security_->http_gate()](const httplib::Request& req,
                                                             httplib::Response& res) {
      return gate->Admit(req, res);
    };
    absl::StatusOr<std::unique_ptr<HttpApi>> http =
        HttpApi::Start(s->engine_.get(), options.http, http_options);
    if (!http.ok()) return http.status();
    s->http_ = std::move(*http);
  }
  // Port files last: whoever waits on them may use every listener at once.
  auto write_port = [](const std::string& path, int port) {
    if (path.empty()) return;
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp) << port << "\n";
    std::filesystem::rename(tmp, path);  // readers never see a partial file
  };
  write_port(options.http_port_file, s->http_port());
  write_port(options.port_file, s->tcp_port_);
  if (options.retention_bytes > 0) {
    s->store_->set_roll_observer([raw = s.get()] {
      {
        std::lock_guard lock(raw->mu_);
        raw->retention_due_ = true;
      }
      raw->stop_cv_.notify_all();
    });
  }
  s->retention_thread_ = std::thread([raw = s.get()] { raw->RetentionLoop(); });
  s->warmer_ = std::make_unique<AnalysisWarmer>(s->engine_.get());
  if (s->forwarder_ != nullptr) {
    s->forwarder_->Start();
    spdlog::info("node: forwarding every stored batch to the hub at {}", options.forward_to);
  }
  return s;
}

void CollectorServer::RetentionLoop() {
  const RetentionPolicy policy{options_.retention_bytes,
                               absl::ToInt64Nanoseconds(options_.retention_age)};
  std::unique_lock lock(mu_);
  while (!stopping_) {
    retention_due_ = false;
    lock.unlock();
    absl::StatusOr<uint64_t> evicted =
        store_->EnforceRetention(policy, absl::ToUnixNanos(absl::Now()));
    if (!evicted.ok()) {
      spdlog::error("retention: {}", evicted.status().ToString());
    } else if (*evicted > 0) {
      spdlog::info("retention: evicted {} segment(s)", *evicted);
    }
    if (const size_t forgotten = ForgetMemoryTotalsOfGoneProcesses(*store_, connections_, memory_totals_)) {
      spdlog::debug("retention: forgot the memory totals of {} process(es) the store no longer holds", forgotten);
    }
    lock.lock();
    // Besides the period (age retention), every sealed segment: the store then holds the limit
    // to within about one segment however fast batches arrive.
    stop_cv_.wait_for(lock, absl::ToChronoNanoseconds(options_.retention_interval),
                      [this] { return stopping_ || retention_due_; });
  }
}

absl::Status CollectorServer::Shutdown(absl::Duration grace) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return absl::OkStatus();
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (forwarder_ != nullptr) forwarder_->Stop();
  // Before waiting for the warmer: it may be half-way through analysing a large backlog.
  if (engine_ != nullptr) engine_->Cancel();
  if (warmer_ != nullptr) warmer_->Stop();
  if (http_ != nullptr) http_->Stop();
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(grace));
  }
  if (retention_thread_.joinable()) retention_thread_.join();
  absl::Status flushed = store_ != nullptr ? store_->Flush() : absl::OkStatus();
  if (socket_owner_ != nullptr) socket_owner_->Release();
  if (data_dir_lock_fd_ >= 0) close(data_dir_lock_fd_);
  data_dir_lock_fd_ = -1;
  return flushed;
}

CollectorServer::~CollectorServer() { (void)Shutdown(absl::ZeroDuration()); }

}  // namespace gpuspy::collector
