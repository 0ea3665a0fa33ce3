// gpuspyd: the gpuspy collector daemon.
#include "collector/server/gpuspyd_program.h"

#include <malloc.h>
#include <signal.h>

#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "analysis/text_form.h"
#include "collector/server/collector_server.h"
#include "collector/server/index_rebuild.h"
#include "collector/server/server_flags.h"
#include "collector/storage/postgres_store.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

int RebuildIndexAndExit(const ServerOptions& options) {
  absl::StatusOr<RebuildResult> r = RebuildIndex(options);
  if (!r.ok()) {
    std::fprintf(stderr, "gpuspyd: rebuilding the index failed: %s\n",
                 std::string(r.status().message()).c_str());
    return 1;
  }
  using analysis::CountOf;
  std::printf("gpuspyd: rebuilt the index of %s from %s: %s, %s, %s\n", options.data_dir.c_str(),
              CountOf(r->segment_files, "segment file", "segment files").c_str(),
              CountOf(r->processes, "process", "processes").c_str(),
              CountOf(r->batches, "batch", "batches").c_str(), CountOf(r->events, "event", "events").c_str());
  if (!r->damaged_index.empty()) std::printf("  the old index is kept as %s\n", r->damaged_index.c_str());
  if (r->step_patterns > 0) {
    std::printf("  %s read back from the old index\n",
                CountOf(r->step_patterns, "job step pattern", "job step patterns").c_str());
  }
  if (r->processes_without_identity > 0) {
    std::printf("  %s no identity record in the segments left (data written by an older gpuspyd, "
                "which kept it in one segment only): listed under job 'unknown'\n",
                CountOf(r->processes_without_identity, "process had", "processes had").c_str());
  }
  if (r->batches_with_placeholders > 0) {
    std::printf("  %llu batch(es) use names defined by a batch that is lost: kept, with %llu name(s) "
                "reading '(lost ...)'\n",
                static_cast<unsigned long long>(r->batches_with_placeholders),
                static_cast<unsigned long long>(r->placeholder_definitions));
  }
  if (!r->kept_source.empty()) {
    std::printf("  %llu record(s) and %llu byte(s) could not be read; the old segments are kept in "
                "%s\n",
                static_cast<unsigned long long>(r->skipped_records),
                static_cast<unsigned long long>(r->unreadable_bytes), r->kept_source.c_str());
  }
  return 0;
}

}  // namespace

int RunGpuspyd(int argc, char** argv, const char* version_number) {
  // Ingest decodes every batch into a few large column vectors. With glibc's default thresholds
  // each is mmap'ed fresh and unmapped after use, and page faults were the top item in a profile
  // of ingest (55% of the time in the kernel). Keep freed memory for reuse instead.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  // Each arena keeps up to that much freed memory, and glibc gives every busy thread (gRPC, HTTP,
  // analysis) its own, up to 8 per core: with queries that each build a job's analyses, RSS grew
  // to several times --analysis-cache-mb from freed memory alone. Four arenas bound it.
  mallopt(M_ARENA_MAX, 4);
  ServerFlags flags = DefaultServerFlags();
  CLI::App app{"gpuspyd: the gpuspy collector. Receives events from profiled processes, stores "
               "them, and answers reports to the gpuspy CLI and viewer."};
  app.set_version_flag("--version", std::string("gpuspyd ") + version_number);
  AddServerFlags(app, &flags);
  CLI11_PARSE(app, argc, argv);
  if (absl::Status st = FinishServerFlags(&flags); !st.ok()) {
    std::fprintf(stderr, "gpuspyd: %s\n", std::string(st.message()).c_str());
    return 2;
  }
  const ServerOptions& options = flags.options;
  spdlog::set_level(spdlog::level::from_str(flags.log_level));
  if (flags.rebuild_index) return RebuildIndexAndExit(options);

  // Block the stop signals in every thread (gRPC's included) and take them here with sigwait.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto server = CollectorServer::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "gpuspyd: %s\n", std::string(server.status().message()).c_str());
    return 1;
  }
  if ((*server)->http_port() > 0) {
    // The web viewer's URL first: it is what a user opens.
    const std::string host = options.http.substr(0, options.http.rfind(':'));
    spdlog::info("gpuspyd web viewer on http://{}:{}/ (HTTP API under /api/)",
                 host == "0.0.0.0" || host.empty() ? "127.0.0.1" : host, (*server)->http_port());
  }
  spdlog::info("gpuspyd listening on {}{}{}, data in {}",
               options.listen.empty() ? "" : absl::StrCat(options.listen.substr(0, options.listen.rfind(':')), ":", (*server)->tcp_port()),
               options.listen.empty() || options.unix_socket.empty() ? "" : " and ",
               options.unix_socket.empty() ? "" : "unix:" + options.unix_socket,
               options.postgres.empty() ? options.data_dir
                                        : DescribePostgres(options.postgres));
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

}  // namespace gpuspy::collector
