// gpuspyd's security settings (gpuspyd --token-file ... ; docs/security.md).
#pragma once

#include <string>

namespace gpuspy::collector {

struct SecurityOptions {
  // Token for ingest and query (the first line of the file). Once set, every TCP call (gRPC and
  // HTTP) must carry a token; unix-socket callers are still known by their uid.
  std::string token_file;
  // Token for attach/detach (and query). Without it, only unix-socket and loopback callers known
  // by their uid can attach.
  std::string control_token_file;
  // TLS on the TCP listeners (gRPC and HTTP): PEM certificate chain and key; with a client CA,
  // gRPC clients must also present a certificate signed by it.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  // Listen beyond loopback without a token (anyone who can reach the port reads everything).
  bool insecure_allow_remote = false;
  // The unix socket may be used by every local user: directory 0755, socket 0666. Each user then
  // sees and controls only the jobs their own processes sent (peer credentials).
  bool unix_shared = false;
};

}  // namespace gpuspy::collector
