#include "collector/auth/collector_security.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "collector/auth/loopback_uid.h"
#include "grpcpp/security/server_credentials.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  if (!in || !(s << in.rdbuf())) return absl::InvalidArgumentError(absl::StrCat(flag, ": cannot read ", path));
  if (s.str().find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", path, " is not a PEM file"));
  }
  return s.str();
}

std::string HostOf(const std::string& address) {
  std::string host = address.substr(0, address.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return host;
}

}  // namespace

bool IsLoopbackListenAddress(const std::string& address) {
  const std::string host = HostOf(address);
  return host == "localhost" || IsLoopbackIp(host);
}

absl::StatusOr<std::unique_ptr<CollectorSecurity>> CollectorSecurity::Create(
    const SecurityOptions& options, const std::string& listen, const std::string& http) {
  std::unique_ptr<CollectorSecurity> s(new CollectorSecurity());
  s->options_ = options;
  absl::StatusOr<AccessTokens> tokens = AccessTokens::Load(options.token_file, options.control_token_file);
  if (!tokens.ok()) return tokens.status();
  s->tokens_ = *std::move(tokens);

  for (const auto& [address, flag] : {std::pair{&listen, "--listen"}, std::pair{&http, "--http"}}) {
    if (address->empty() || IsLoopbackListenAddress(*address)) continue;
    if (!s->tokens_.configured()) {
      if (!options.insecure_allow_remote) {
        return absl::FailedPreconditionError(absl::StrCat(
            flag, " ", *address, " is reachable from other hosts, and no token is set: add "
            "--token-file FILE (e.g. openssl rand -hex 32 > FILE; chmod 600 FILE), or "
            "--insecure-allow-remote to let anyone who reaches it read everything"));
      }
      spdlog::warn("{} {}: anyone who can reach it may read (and send) everything "
                   "(--insecure-allow-remote)", flag, *address);
    } else if (options.tls_cert.empty()) {
      spdlog::warn("{} {}: tokens travel in clear text without --tls-cert/--tls-key", flag, *address);
    }
  }

  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!options.tls_client_ca.empty() && options.tls_cert.empty()) {
    return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
  }
  s->tcp_credentials_ = grpc::InsecureServerCredentials();
  if (!options.tls_cert.empty()) {
    absl::StatusOr<std::string> cert = ReadPem(options.tls_cert, "--tls-cert");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadPem(options.tls_key, "--tls-key");
    if (!key.ok()) return key.status();
    grpc::SslServerCredentialsOptions tls(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    tls.pem_key_cert_pairs.push_back({*key, *cert});
    if (!options.tls_client_ca.empty()) {
      absl::StatusOr<std::string> ca = ReadPem(options.tls_client_ca, "--tls-client-ca");
      if (!ca.ok()) return ca.status();
      tls.pem_root_certs = *ca;
      tls.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    s->tcp_credentials_ = grpc::SslServerCredentials(tls);
  }

  s->listen_host_ = listen.empty() ? "" : HostOf(listen);
  spdlog::info("access: {}; TLS {}; unix socket {}",
               !s->tokens_.configured() ? "no tokens (local callers known by uid)"
               : s->tokens_.has_control_token() ? "tokens for ingest/query and for control"
                                                : "token for ingest/query (no control token: attach only by local uid)",
               options.tls_cert.empty() ? "off" : options.tls_client_ca.empty() ? "on" : "on, client certificates required",
               options.unix_shared ? "shared (each uid sees its own jobs)" : "private to gpuspyd's uid");
  return s;
}

void CollectorSecurity::Attach(Store* store, const int* tcp_port) {
  const AccessConfig config{.tokens = &tokens_,
                            .owner_uid = static_cast<uint32_t>(geteuid()),
                            .insecure_allow_remote = options_.insecure_allow_remote};
  access_ = std::make_unique<GrpcAccess>(config, store, listen_host_, tcp_port);
  http_gate_ = std::make_unique<HttpGate>(config, !options_.tls_cert.empty());
}

void CollectorSecurity::Configure(grpc::ServerBuilder* builder) const {
  builder->SetOption(UnixPeerCheckOption(geteuid()));
}

grpc::Service* CollectorSecurity::Wrap(v1::Query::Service* query) {
  query_ = std::make_unique<AuthorizedQuery>(query, access_.get());
  return query_.get();
}

grpc::Service* CollectorSecurity::Wrap(v1::Control::Service* control) {
  control_ = std::make_unique<AuthorizedControl>(control, access_.get());
  return control_.get();
}

absl::Status PrepareUnixSocketDir(const std::string& socket_path, bool shared) {
  const std::filesystem::path dir = std::filesystem::path(socket_path).parent_path();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir.string(), ": ", ec.message()));
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::UnavailableError(absl::StrCat(dir.string(), " is not a directory"));
  }
  if (st.st_uid != geteuid()) {
    return absl::PermissionDeniedError(absl::StrCat(
        dir.string(), " belongs to uid ", st.st_uid, ", not to gpuspyd's uid ", geteuid(),
        ": its owner could replace the socket; remove it or choose another --unix"));
  }
  if (chmod(dir.c_str(), shared ? 0755 : 0700) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot chmod ", dir.string(), ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status OpenUnixSocketToAll(const std::string& socket_path) {
  if (chmod(socket_path.c_str(), 0666) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot chmod ", socket_path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace gpuspy::collector
