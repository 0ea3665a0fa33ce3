// How gpuspy's clients (the injected core, gpuspy-replay, the CLI, a node forwarding to its hub)
// prove who they are to gpuspyd (docs/security.md):
//   - a token, sent on every call as "authorization: Bearer <token>";
//   - TLS to TCP addresses when a CA is given (the server's certificate is checked against it),
//     with an optional client certificate;
//   - on unix sockets, their uid, through a named socket end (unix_peer_name.h).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "grpcpp/support/channel_arguments.h"

namespace gpuspy {

struct ClientSecurity {
  std::string token;            // "" = send none
  std::string tls_ca_pem;       // "" = plaintext TCP
  std::string tls_cert_pem;     // client certificate chain (mutual TLS), optional
  std::string tls_key_pem;
  std::string tls_server_name;  // expected name in the server's certificate, "" = the host
};

// GPUSPY_TOKEN, else the first line of the file GPUSPY_TOKEN_FILE; GPUSPY_TLS_CA, GPUSPY_TLS_CERT,
// GPUSPY_TLS_KEY (PEM files) and GPUSPY_TLS_SERVER_NAME. An unreadable file is an error that
// names it; a token is not logged anywhere.
absl::StatusOr<ClientSecurity> ClientSecurityFromEnvironment();

// Reads a token file: its first line, surrounding whitespace removed. Empty -> error.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// A channel to `address` ("host:port" or "unix:/path") with `security` applied to every call.
std::shared_ptr<grpc::Channel> CreateClientChannel(const std::string& address,
                                                   const ClientSecurity& security,
                                                   grpc::ChannelArguments args);

}  // namespace gpuspy
