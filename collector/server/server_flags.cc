#include "collector/server/server_flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gpuspy::collector {
namespace {

// docs/security.md.
void SecurityFlags(CLI::App& app, SecurityOptions& o) {
  app.add_option("--token-file", o.token_file,
                 "Token for ingest and query (first line of the file). Once set, every TCP call "
                 "(gRPC and HTTP) needs a token; required for listeners beyond loopback")
      ->check(CLI::ExistingFile);
  app.add_option("--control-token-file", o.control_token_file,
                 "Token for attach/detach (and query) over TCP")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-cert", o.tls_cert, "TLS certificate chain (PEM) for the TCP gRPC and HTTP listeners")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-key", o.tls_key, "TLS private key (PEM)")->check(CLI::ExistingFile);
  app.add_option("--tls-client-ca", o.tls_client_ca,
                 "Require gRPC clients to present a certificate signed by this CA (PEM)")
      ->check(CLI::ExistingFile);
  app.add_flag("--insecure-allow-remote", o.insecure_allow_remote,
               "Allow --listen/--http beyond loopback without a token: anyone who reaches them "
               "reads and sends everything");
  app.add_flag("--unix-shared", o.unix_shared,
               "Let every local user connect to the unix socket; each sees and attaches to only "
               "its own jobs (peer credentials)");
}

}  // namespace

ServerFlags DefaultServerFlags() {
  ServerFlags f;
  f.options.unix_socket = DefaultUnixSocketPath();
  f.options.data_dir = DefaultDataDir();
  return f;
}

void AddServerFlags(CLI::App& app, ServerFlags* flags) {
  ServerOptions& options = flags->options;
  app.add_option("--listen", options.listen,
                 "TCP address for gRPC (host:port; port 0 picks a free one; '' disables)")
      ->capture_default_str();
  app.add_option("--unix", options.unix_socket, "Unix socket path for local processes ('' disables)")
      ->capture_default_str();
  app.add_option("--data-dir", options.data_dir, "Where events and the index are stored")
      ->capture_default_str();
  app.add_option("--role", options.role,
                 "standalone: one collector; node: also forward everything to --forward-to; hub: "
                 "the collector nodes forward to (usually with --postgres)")
      ->check(CLI::IsMember({"standalone", "node", "hub"}))
      ->capture_default_str();
  app.add_option("--forward-to", options.forward_to, "node: the hub's gRPC address (host:port)");
  app.add_option("--postgres", options.postgres,
                 "Store in PostgreSQL instead (hub): libpq conninfo or postgresql:// URI; "
                 "--data-dir, --segment-bytes and --fsync then do not apply");
  app.add_option("--retention-bytes", options.retention_bytes,
                 "Evict the oldest data beyond this many bytes (0 = unlimited)")
      ->capture_default_str();
  app.add_option("--retention-age", flags->retention_age, "Evict data older than this (e.g. 7d, 12h, 0 = keep)")
      ->capture_default_str();
  app.add_option("--retention-interval", flags->retention_interval,
                 "How often retention runs for --retention-age (e.g. 30s, 5m); past "
                 "--retention-bytes it also runs each time a segment is sealed")
      ->capture_default_str();
  app.add_option("--segment-bytes", options.segment_bytes, "Size at which a segment file is sealed")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{4096}, uint64_t{1} << 40));
  app.add_option("--fsync", flags->fsync, "none: durable against a collector crash; batch: also against power loss (slower)")
      ->check(CLI::IsMember({"none", "batch"}))
      ->capture_default_str();
  app.add_option("--max-message-bytes", options.max_message_bytes, "Largest accepted gRPC message")
      ->capture_default_str()
      ->check(CLI::Range(1 << 16, 1 << 30));
  app.add_option("--max-ingest-streams", options.max_ingest_streams,
                 "Ingest streams taken at once; more producers are refused with a retry hint and "
                 "come back later (their events wait in their spill)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  app.add_option("--ingest-memory-mb", options.ingest_memory_mb,
                 "Memory budget for batches being decoded and stored; past it batches wait "
                 "briefly, then are refused with a retry hint (docs/overload.md)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  app.add_option("--ingest-wait-ms", options.ingest_wait_ms,
                 "How long a batch may wait for room in the ingest memory budget before it is "
                 "refused (keep it well below producers' ack timeout, 5 s by default)")
      ->capture_default_str()
      ->check(CLI::Range(0, 60000));
  app.add_option("--analysis-cache-mb", options.analysis_cache_mb,
                 "Memory for per-step analyses kept between queries (estimated); past it the "
                 "processes asked about least recently are analysed again when next asked for "
                 "(0: no bound)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 24));
  app.add_option("--step-pattern", options.step_pattern,
                 "Regex matched against NVTX range names to find steps (group 1 = step number)")
      ->capture_default_str();
  app.add_option("--port-file", options.port_file, "Write the bound TCP port to this file");
  app.add_option("--http", options.http,
                 "HTTP/JSON API address (host:port; port 0 picks a free one; '' disables)")
      ->capture_default_str();
  app.add_option("--http-port-file", options.http_port_file, "Write the bound HTTP port to this file");
  app.add_option("--http-max-connections", options.http_max_connections,
                 "HTTP connections held open at once; more are closed as they arrive")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{65536}));
  app.add_option("--http-max-connections-per-peer", options.http_max_connections_per_peer,
                 "HTTP connections held open at once from one client address; more from it are "
                 "closed as they arrive, other clients are still served")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{65536}));
  app.add_option("--http-request-timeout-ms", options.http_request_timeout_ms,
                 "Time for an HTTP request (line, headers, body) to arrive whole; a client "
                 "slower than this is disconnected")
      ->capture_default_str()
      ->check(CLI::Range(1, 600000));
  SecurityFlags(app, options.security);
  app.add_option("--compress", flags->compress, "Stored batches: zstd (about half the disk) or none")
      ->check(CLI::IsMember({"zstd", "none"}))
      ->capture_default_str();
  app.add_flag("--rebuild-index", flags->rebuild_index,
               "Rebuild the index of --data-dir from its segment files (when gpuspyd refuses a "
               "damaged index), then exit; the daemon must not be running on that dir");
  app.add_option("--log-level", flags->log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
}

absl::StatusOr<absl::Duration> ParseRetentionAge(const std::string& text) {
  absl::Duration age;
  if (text == "0") return absl::ZeroDuration();
  if (!text.empty() && text.back() == 'd') {
    int days = 0;
    if (!absl::SimpleAtoi(text.substr(0, text.size() - 1), &days) || days < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--retention-age '", text, "' is not a duration (e.g. 7d, 12h)"));
    }
    return absl::Hours(24) * days;
  }
  if (!absl::ParseDuration(text, &age) || age < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--retention-age '", text, "' is not a duration (e.g. 7d, 12h)"));
  }
  return age;
}

absl::Status FinishServerFlags(ServerFlags* flags) {
  ServerOptions& options = flags->options;
  if ((options.role == "node") != !options.forward_to.empty()) {
    return absl::InvalidArgumentError("--role node needs --forward-to HUB, and only a node forwards");
  }
  if (flags->rebuild_index && !options.postgres.empty()) {
    return absl::InvalidArgumentError("--rebuild-index applies to --data-dir, not --postgres");
  }
  absl::StatusOr<absl::Duration> age = ParseRetentionAge(flags->retention_age);
  if (!age.ok()) return age.status();
  options.retention_age = *age;
  absl::Duration interval;
  if (!absl::ParseDuration(flags->retention_interval, &interval) ||
      interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--retention-interval '", flags->retention_interval, "' is not a positive duration (e.g. 30s)"));
  }
  options.retention_interval = interval;
  options.fsync_each_batch = flags->fsync == "batch";
  options.compress_segments = flags->compress == "zstd";
  return absl::OkStatus();
}

}  // namespace gpuspy::collector
