// Everything gpuspyd's listeners need for access control, built once from its flags: tokens,
// TLS credentials, the unix-socket peer check, the gRPC service wrappers and the HTTP gate.
// docs/security.md says what each guarantees.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "collector/auth/authorized_services.h"
#include "collector/auth/grpc_access.h"
#include "collector/auth/http_gate.h"
#include "collector/auth/security_options.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"

namespace gpuspy::collector {

class CollectorSecurity {
 public:
  // `listen`/`http`: gpuspyd's --listen and --http ("" = off). Refuses a listener beyond
  // loopback without a token (unless --insecure-allow-remote), TLS files that do not load, and
  // tokens that are too short. Runs before anything is opened: a bad flag fails fast.
  static absl::StatusOr<std::unique_ptr<CollectorSecurity>> Create(const SecurityOptions& options,
                                                                   const std::string& listen,
                                                                   const std::string& http);
  // Then, once the store is open: `store` answers whose jobs are whose; `tcp_port` is read at
  // call time (bound after the server is built).
  void Attach(Store* store, const int* tcp_port);

  // For the TCP listener: TLS if configured, else plaintext.
  std::shared_ptr<grpc::ServerCredentials> TcpCredentials() const { return tcp_credentials_; }
  // Adds the unix-socket peer check to a server about to be built.
  void Configure(grpc::ServerBuilder* builder) const;
  // The services to register in place of the raw ones (owned by this object).
  grpc::Service* Wrap(v1::Query::Service* query);
  grpc::Service* Wrap(v1::Control::Service* control);
  IngestGate* ingest_gate() { return access_.get(); }
  const HttpGate& http_gate() const { return *http_gate_; }
  bool http_tls() const { return !options_.tls_cert.empty(); }
  const SecurityOptions& options() const { return options_; }

 private:
  CollectorSecurity() = default;

  SecurityOptions options_;
  std::string listen_host_;
  AccessTokens tokens_;
  std::shared_ptr<grpc::ServerCredentials> tcp_credentials_;
  std::unique_ptr<GrpcAccess> access_;
  std::unique_ptr<HttpGate> http_gate_;
  std::unique_ptr<AuthorizedQuery> query_;
  std::unique_ptr<AuthorizedControl> control_;
};

// "127.0.0.1:7070", "[::1]:7070", "localhost:7070": the listener is reachable from this host only.
bool IsLoopbackListenAddress(const std::string& address);

// The unix socket's directory: created, owned by us (else refused: whoever owns it could swap
// the socket), 0700 — or 0755 when `shared`, where the socket itself is opened to all by
// OpenUnixSocketToAll once it exists. The socket itself is UnixSocketOwner's (collector/server).
absl::Status PrepareUnixSocketDir(const std::string& socket_path, bool shared);
absl::Status OpenUnixSocketToAll(const std::string& socket_path);

}  // namespace gpuspy::collector
