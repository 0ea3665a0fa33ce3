// gpuspyd's configuration, filled from its command line (see gpuspyd_main.cc).
#pragma once

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "collector/auth/security_options.h"
#include "analysis/step_segmenter.h"

namespace gpuspy::collector {

struct ServerOptions {
  std::string listen = "127.0.0.1:7070";  // "" disables TCP
  std::string unix_socket;                // "" disables; default from DefaultUnixSocketPath()
  std::string data_dir;                   // default from DefaultDataDir()
  std::string postgres;                   // PostgreSQL conninfo: store there, not in data_dir
  std::string role = "standalone";        // standalone | node | hub
  std::string forward_to;                 // node: the hub's address
  uint64_t retention_bytes = 10ull << 30;
  absl::Duration retention_age = absl::Hours(24 * 7);
  absl::Duration retention_interval = absl::Seconds(30);
  uint64_t segment_bytes = 64ull << 20;
  bool fsync_each_batch = false;
  bool compress_segments = true;     // --compress zstd|none
  int max_message_bytes = 32 << 20;
  // Overload bounds (collector/ingest/ingest_admission.h, docs/overload.md).
  size_t max_ingest_streams = 1024;
  uint64_t ingest_memory_mb = 256;
  int ingest_wait_ms = 500;  // how long a batch may wait for room before it is refused
  // Memory for cached per-step analyses (QueryEngine::set_cache_budget); 0 = unbounded.
  uint64_t analysis_cache_mb = 1024;
  std::string step_pattern = analysis::kDefaultStepPattern;
  std::string port_file;                  // written with the bound TCP port once listening
  std::string http = "127.0.0.1:7071";    // HTTP/JSON API ("" disables)
  std::string http_port_file;             // written with the bound HTTP port
  // HTTP connections held at once, in all and per client address; and how long a request may
  // take to arrive (collector/http/guarded_server.h).
  size_t http_max_connections = 1024;
  size_t http_max_connections_per_peer = 64;
  int http_request_timeout_ms = 5000;
  SecurityOptions security;               // tokens, TLS, shared unix socket (docs/security.md)
};

// /tmp/gpuspy-<uid>/gpuspyd.sock: per user, so one user's daemon never receives another's jobs.
std::string DefaultUnixSocketPath();
// $GPUSPY_DATA_DIR, else $XDG_DATA_HOME/gpuspy, else ~/.local/share/gpuspy.
std::string DefaultDataDir();

}  // namespace gpuspy::collector
