// Kineto import throughput: MB/s and events/s of ReadKinetoTrace on the largest shared trace and
// on a large synthetic trace (written by the exporter from synthetic steps), with the peak RSS
// growth to show memory stays far below the file size. A plain driver (one long run each), not a
// microbenchmark: prints a table row per input.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "codec/expanded_events.h"
#include "exporters/chrome_trace/chrome_trace_writer.h"
#include "importers/kineto/kineto_reader.h"
#include "tools/replay/synthetic_workload.h"

namespace {

long PeakRssKb() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// Uncompressed JSON size of a trace (gzip'd or not), for MB/s of JSON parsed.
uint64_t JsonBytes(const std::string& path) {
  if (path.size() < 3 || path.substr(path.size() - 3) != ".gz") return std::filesystem::file_size(path);
  std::string cmd = "gzip -dc '" + path + "' | wc -c";
  FILE* p = popen(cmd.c_str(), "r");
  unsigned long long n = 0;
  if (p != nullptr && std::fscanf(p, "%llu", &n) != 1) n = 0;
  if (p != nullptr) pclose(p);
  return n;
}

void Measure(const std::string& label, const std::string& path, size_t piece_bytes) {
  const uint64_t bytes = JsonBytes(path);
  const auto t0 = std::chrono::steady_clock::now();
  auto trace = gpuspy::importers::ReadKinetoTraceInPieces(path, piece_bytes);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!trace.ok()) {
    std::printf("| %s | error: %s |\n", label.c_str(), std::string(trace.status().message()).c_str());
    return;
  }
  const double mb = bytes / 1e6;
  std::printf("| %s | %.1f MB | %llu | %.2f s | %.1f MB/s | %.2f M events/s | %.0f MB |\n",
              label.c_str(), mb, static_cast<unsigned long long>(trace->stats.trace_events), s,
              mb / s, trace->stats.trace_events / s / 1e6, PeakRssKb() / 1024.0);
}

}  // namespace

// import_bench --generate FILE MB   writes a synthetic trace of about MB megabytes
// import_bench [--header] [--piece-bytes N] FILE
//                                     imports FILE and prints one table row (peak RSS is this
//                                     process's whole high-water mark: run one input per process);
//                                     N: traceEvents piece size (0: one document; default
//                                     kTracePieceBytes, what gpuspy reads with)
int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--generate") {
    gpuspy::synthetic::SyntheticOptions o;
    o.scenario = gpuspy::synthetic::Scenario::kLaunchStorm;
    o.steps = std::max(1, std::atoi(argv[3]) / 3);  // ~3 MB of JSON per launch-storm step
    const auto rank = gpuspy::synthetic::GenerateRank(o, 0);
    gpuspy::exporters::ExportedProcess p;
    p.identity = rank.identity;
    for (const auto& step : rank.steps) gpuspy::ToExpandedEvents(step, rank.strings, &p.events);
    return gpuspy::exporters::WriteChromeTrace(argv[2], {p}).ok() ? 0 : 1;
  }
  int i = 1;
  if (i < argc && std::string(argv[i]) == "--header") {
    std::printf("| input | JSON | trace events | time | throughput | events/s | peak RSS |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    ++i;
  }
  size_t piece_bytes = gpuspy::importers::kTracePieceBytes;
  if (i + 1 < argc && std::string(argv[i]) == "--piece-bytes") {
    piece_bytes = std::strtoull(argv[i + 1], nullptr, 10);
    i += 2;
  }
  if (i >= argc) return 0;
  const std::string name = std::filesystem::path(argv[i]).filename().string();
  Measure(piece_bytes == 0 ? name + " (one document)" : name + " (pieces of " + std::to_string(piece_bytes >> 20) + " MiB)",
          argv[i], piece_bytes);
  return 0;
}
