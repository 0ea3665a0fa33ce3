// `gpuspy analyze trace.json.gz ...` (also `gpuspy import --offline`): PyTorch profiler traces
// analysed in this process, no gpuspyd. The files are one job's ranks; each is read and analysed
// on its own thread, then the job-level analysis the collector uses (job_analysis.h) runs over
// them, so the reports are the ones `gpuspy import` + `gpuspy report` would give.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "importers/kineto/trace_bytes.h"
#include "viewer/cli/commands.h"

namespace CLI {
class App;
}  // namespace CLI

namespace gpuspy::cli {

struct AnalyzeOptions {
  std::vector<std::string> files;
  std::string job;                    // default: the first file's name up to its first '.'
  bool keep_going = false;            // analyse the files that read; exit 1 all the same
  std::vector<std::string> export_to;  // {"perfetto", "out.json[.gz]"}
  std::string html;                   // a static report page
  unsigned threads = 0;               // 0: one per file, at most the machine's cores
  bool timings = false;               // per-stage MB/s on stderr
  std::string step_pattern;           // NVTX steps: ranges matching it; "" = ProfilerStep#(\d+)
  uint64_t max_trace_bytes = importers::kDefaultMaxJsonBytes;  // a file's JSON text, inflated
};

int Analyze(const GlobalOptions& g, const AnalyzeOptions& o);

// The options `analyze` and `import --offline` share: --keep-going, --export, --html, --threads,
// --timings; and --step-pattern (import's goes to ImportOptions).
void AddOfflineOptions(CLI::App* command, AnalyzeOptions* an);
void AddStepPatternOption(CLI::App* command, std::string* step_pattern);

}  // namespace gpuspy::cli
