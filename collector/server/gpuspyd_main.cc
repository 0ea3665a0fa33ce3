// gpuspyd: the gpuspy collector daemon.
#include <malloc.h>
#include <signal.h>

#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "collector/server/collector_server.h"
#include "collector/storage/postgres_store.h"
#include "spdlog/spdlog.h"

namespace {

using gpuspy::collector::ServerOptions;

// Parses "7d", "12h", "30m", "45s" or any absl duration ("1h30m").
bool ParseAge(const std::string& text, absl::Duration* out) {
  if (!text.empty() && text.back() == 'd') {
    int days = 0;
    if (!absl::SimpleAtoi(text.substr(0, text.size() - 1), &days) || days < 0) return false;
    *out = absl::Hours(24) * days;
    return true;
  }
  return absl::ParseDuration(text, out);
}

// docs/security.md.
void SecurityFlags(CLI::App& app, gpuspy::collector::SecurityOptions& o) {
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

int main(int argc, char** argv) {
  // Ingest decodes every batch into a few large column vectors. With glibc's default thresholds
  // each is mmap'ed fresh and unmapped after use, and page faults were the top item in a profile
  // of ingest (55% of the time in the kernel). Keep freed memory for reuse instead.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  ServerOptions options;
  options.unix_socket = gpuspy::collector::DefaultUnixSocketPath();
  options.data_dir = gpuspy::collector::DefaultDataDir();
  std::string retention_age = "7d";
  std::string log_level = "info";
  std::string fsync = "none";

  CLI::App app{"gpuspyd: the gpuspy collector. Receives events from profiled processes, stores "
               "them, and answers reports to the gpuspy CLI and viewer."};
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
  app.add_option("--retention-age", retention_age, "Evict data older than this (e.g. 7d, 12h, 0 = keep)")
      ->capture_default_str();
  app.add_option("--segment-bytes", options.segment_bytes, "Size at which a segment file is sealed")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{4096}, uint64_t{1} << 40));
  app.add_option("--fsync", fsync, "none: durable against a collector crash; batch: also against power loss (slower)")
      ->check(CLI::IsMember({"none", "batch"}))
      ->capture_default_str();
  app.add_option("--max-message-bytes", options.max_message_bytes, "Largest accepted gRPC message")
      ->capture_default_str()
      ->check(CLI::Range(1 << 16, 1 << 30));
  app.add_option("--step-pattern", options.step_pattern,
                 "Regex matched against NVTX range names to find steps (group 1 = step number)")
      ->capture_default_str();
  app.add_option("--port-file", options.port_file, "Write the bound TCP port to this file");
  app.add_option("--http", options.http,
                 "HTTP/JSON API address (host:port; port 0 picks a free one; '' disables)")
      ->capture_default_str();
  app.add_option("--http-port-file", options.http_port_file, "Write the bound HTTP port to this file");
  SecurityFlags(app, options.security);
  std::string compress = "zstd";
  app.add_option("--compress", compress, "Stored batches: zstd (about half the disk) or none")
      ->check(CLI::IsMember({"zstd", "none"}))
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if ((options.role == "node") != !options.forward_to.empty()) {
    std::fprintf(stderr, "gpuspyd: --role node needs --forward-to HUB, and only a node forwards\n");
    return 2;
  }

  if (retention_age == "0") {
    options.retention_age = absl::ZeroDuration();
  } else if (!ParseAge(retention_age, &options.retention_age)) {
    std::fprintf(stderr, "gpuspyd: --retention-age '%s' is not a duration (e.g. 7d, 12h)\n",
                 retention_age.c_str());
    return 2;
  }
  options.fsync_each_batch = fsync == "batch";
  options.compress_segments = compress == "zstd";
  spdlog::set_level(spdlog::level::from_str(log_level));

  // Block the stop signals in every thread (gRPC's included) and take them here with sigwait.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto server = gpuspy::collector::CollectorServer::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "gpuspyd: %s\n", std::string(server.status().message()).c_str());
    return 1;
  }
  if ((*server)->http_port() > 0) {
    spdlog::info("gpuspyd HTTP API on http://{}:{}/api/jobs", options.http.substr(0, options.http.rfind(':')),
                 (*server)->http_port());
  }
  spdlog::info("gpuspyd listening on {}{}{}, data in {}",
               options.listen.empty() ? "" : absl::StrCat(options.listen.substr(0, options.listen.rfind(':')), ":", (*server)->tcp_port()),
               options.listen.empty() || options.unix_socket.empty() ? "" : " and ",
               options.unix_socket.empty() ? "" : "unix:" + options.unix_socket,
               options.postgres.empty() ? options.data_dir
                                        : gpuspy::collector::DescribePostgres(options.postgres));
  int sig = 0;
  sigwait(&stop_signals, &sig);
  spdlog::info("gpuspyd: {} received, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  if (absl::Status st = (*server)->Shutdown(); !st.ok()) {
    spdlog::error("gpuspyd: flushing storage failed: {}", st.ToString());
    return 1;
  }
  spdlog::info("gpuspyd: stopped cleanly");
  return 0;
}
