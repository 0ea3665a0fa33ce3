// Kineto import throughput: MB/s and events/s of ReadKinetoTrace on the largest shared trace and
// on a large synthetic trace (written by the exporter from synthetic steps), with the peak RSS
// growth to show memory stays far below the file size. A plain driver (one long run each), not a
// microbenchmark: prints a table row per input.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
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

void Measure(const std::string& label, const std::string& path) {
  const uint64_t bytes = JsonBytes(path);
  const long rss_before = PeakRssKb();
  const auto t0 = std::chrono::steady_clock::now();
  auto trace = gpuspy::importers::ReadKinetoTrace(path);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!trace.ok()) {
    std::printf("| %s | error: %s |\n", label.c_str(), std::string(trace.status().message()).c_str());
    return;
  }
  const double mb = bytes / 1e6;
  std::printf("| %s | %.1f MB | %llu | %.2f s | %.1f MB/s | %.2f M events/s | %.0f MB |\n",
              label.c_str(), mb, static_cast<unsigned long long>(trace->stats.trace_events), s,
              mb / s, trace->stats.trace_events / s / 1e6,
              (PeakRssKb() - rss_before) / 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string shared = argc > 1 ? argv[1] : "../shared/traces/nccl_a100.json.gz";
  const int synthetic_mb = argc > 2 ? std::atoi(argv[2]) : 200;
  std::printf("| input | JSON | trace events | time | throughput | events/s | peak RSS growth |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  if (std::filesystem::exists(shared)) Measure(std::filesystem::path(shared).filename().string(), shared);

  // A synthetic trace of about `synthetic_mb` MB: launch-storm steps exported as Kineto JSON.
  const std::string tmp = std::filesystem::temp_directory_path() / "gpuspy_import_bench.json";
  {
    gpuspy::synthetic::SyntheticOptions o;
    o.scenario = gpuspy::synthetic::Scenario::kLaunchStorm;
    o.steps = std::max(1, synthetic_mb / 3);  // ~3 MB of JSON per launch-storm step
    const auto rank = gpuspy::synthetic::GenerateRank(o, 0);
    gpuspy::exporters::ExportedProcess p;
    p.identity = rank.identity;
    for (const auto& step : rank.steps) gpuspy::ToExpandedEvents(step, rank.strings, &p.events);
    if (!gpuspy::exporters::WriteChromeTrace(tmp, {p}).ok()) return 1;
  }
  Measure("synthetic launch storm", tmp);
  std::filesystem::remove(tmp);
  return 0;
}
