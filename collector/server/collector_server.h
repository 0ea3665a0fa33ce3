// Wires the collector together: store -> ingest/query/control services -> gRPC listeners, plus
// the retention loop. Start() returns once listening; Shutdown() drains and flushes.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "collector/auth/collector_security.h"
#include "collector/control/control_service.h"
#include "collector/forward/forwarder.h"
#include "collector/http/http_api.h"
#include "collector/ingest/ingest_service.h"
#include "collector/query/analysis_warmer.h"
#include "collector/query/query_service.h"
#include "collector/server/server_options.h"
#include "collector/server/unix_socket_owner.h"
#include "collector/storage/dictionary_cache.h"
#include "collector/storage/store.h"
#include "grpcpp/server.h"

namespace gpuspy::collector {

class CollectorServer {
 public:
  static absl::StatusOr<std::unique_ptr<CollectorServer>> Start(const ServerOptions& options);
  ~CollectorServer();

  // Stops accepting, lets in-flight calls finish (bounded by `grace`), flushes storage.
  absl::Status Shutdown(absl::Duration grace = absl::Seconds(5));

  int tcp_port() const { return tcp_port_; }
  int http_port() const { return http_ != nullptr ? http_->port() : 0; }
  const std::string& unix_socket() const { return unix_socket_; }

 private:
  explicit CollectorServer(const ServerOptions& options) : options_(options) {}
  void RetentionLoop();

  ServerOptions options_;
  std::unique_ptr<CollectorSecurity> security_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<DictionaryCache> dictionaries_;
  IngestCounters counters_;
  ConnectionRegistry connections_;
  std::unique_ptr<IngestAdmission> admission_;  // overload bounds
  OverloadLedger overload_;                     // refusals per process
  DataVersions versions_;  // which data changed: lets queries re-analyse only what is new
  MemoryTotals memory_totals_;  // device memory totals ingest keeps for recent-step reports
  std::unique_ptr<JobStepPatterns> step_patterns_;  // before ingestor_ and engine_, which use it
  std::unique_ptr<BatchIngestor> ingestor_;
  std::unique_ptr<QueryEngine> engine_;
  std::unique_ptr<IngestService> ingest_service_;
  std::unique_ptr<QueryService> query_service_;
  std::unique_ptr<CaptureManager> captures_;
  std::unique_ptr<ControlService> control_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<HttpApi> http_;
  std::unique_ptr<Forwarder> forwarder_;  // node role only
  std::unique_ptr<AnalysisWarmer> warmer_;
  int tcp_port_ = 0;
  int data_dir_lock_fd_ = -1;
  std::string unix_socket_;
  std::unique_ptr<UnixSocketOwner> socket_owner_;  // unlinks only the socket this process bound

  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  bool retention_due_ = false;  // a segment was sealed: size retention may evict now
  std::thread retention_thread_;
};

}  // namespace gpuspy::collector
