// Access control for gpuspyd's gRPC services: gathers the facts about a call (token, transport,
// the caller's uid), decides with access_policy.h, and limits uid-bound callers to their own jobs.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "collector/auth/access_policy.h"
#include "collector/ingest/ingest_service.h"
#include "collector/storage/store.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/server_context.h"

namespace gpuspy::collector {

// Turns away unix-socket connections whose SO_PEERCRED uid does not match the uid their peer name
// claims, or that carry no such name and are neither `owner_uid` nor root (unix_peer_name.h).
// Install with ServerBuilder::SetOption; it runs as each connection is accepted.
std::unique_ptr<grpc::ServerBuilderOption> UnixPeerCheckOption(uid_t owner_uid);

class GrpcAccess final : public IngestGate {
 public:
  // `tcp_listen_host`: the host part of --listen (for finding loopback callers' uid);
  // `tcp_port`: the bound TCP port, read at call time (known only once the server started).
  GrpcAccess(AccessConfig config, Store* store, std::string tcp_listen_host,
             const int* tcp_port)
      : config_(config), store_(store), tcp_listen_host_(std::move(tcp_listen_host)),
        tcp_port_(tcp_port) {}

  absl::StatusOr<Principal> Authorize(const grpc::ServerContext& context, Permission needed) const;
  // OK when `principal` may see `job_id`: it is not bound to one uid, or every process of the
  // job belongs to that uid (an unknown job is left to the handler, which says so).
  absl::Status CheckJob(const Principal& principal, const std::string& job_id) const;

  grpc::Status AdmitStream(grpc::ServerContext* context) override;
  grpc::Status AdmitProcess(grpc::ServerContext* context, v1::ProcessIdentity* identity) override;

  CallFacts Facts(const grpc::ServerContext& context) const;

 private:
  // Logs refusals, at most a few a second's worth: a client retrying must not flood the log.
  void LogRefusal(const grpc::ServerContext& context, const absl::Status& st) const;

  AccessConfig config_;
  Store* store_;
  std::string tcp_listen_host_;
  const int* tcp_port_;
  mutable std::atomic<uint64_t> refusals_{0};
};

// Refuses oversized identifiers in requests before any work is done.
absl::Status CheckRequestString(const std::string& value, const char* field);

}  // namespace gpuspy::collector
