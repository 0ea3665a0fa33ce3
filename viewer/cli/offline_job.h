// Trace files of one job read and analysed in this process, no gpuspyd: what `gpuspy analyze`
// reports and what `gpuspy diff` compares on the files' side. Each file is read and analysed on
// its own thread, then the job-level analysis the collector uses (job_analysis.h) runs over them,
// so the steps are those `gpuspy import` + `gpuspy report` would give.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "analysis/job_analysis.h"
#include "analysis/step_segmenter.h"
#include "analysis/step_series.h"
#include "importers/kineto/kineto_reader.h"

namespace gpuspy::cli {

struct OfflineFile {
  std::string path;
  absl::Status status;                        // why it could not be read
  std::optional<importers::KinetoTrace> trace;  // its events empty after EventsAfterAnalysis::kDrop
  importers::KinetoReadTimings timings;
  int64_t analyse_ns = 0;
};

struct OfflineJob {
  std::string job;
  std::vector<OfflineFile> files;             // in the order given; process id = index + 1
  std::vector<analysis::JobProcess> processes;  // the files that read
  // Every step of every process, job-level findings applied.
  std::map<uint64_t, std::vector<analysis::StepAnalysis>> steps;
  std::map<uint64_t, std::string> labels;      // process id -> rank, as the CLI shows it
  int64_t job_ns = 0;                          // the job-level analysis
  bool any_failed() const;
};

// Whether each file's events stay in its OfflineFile once its steps are analysed: the HTML
// report's rank comparison, --export and `gpuspy diff` read them; the report alone needs only
// the steps, and then a job's ranks are never all in memory at once (each rank's events were
// ~90% of a many-rank analysis's memory).
enum class EventsAfterAnalysis { kKeep, kDrop };

// Reads and analyses `files` as job `job` with at most `threads` threads (0: one per file, at
// most the machine's cores; the threads a file's reading leaves over analyse its steps);
// `progress`: the progress line on stderr (progress_line.h: the
// caller decides whether stderr is a terminal and the output not --json). NVTX steps are the
// ranges matching `step_pattern` (as gpuspyd's --step-pattern).
OfflineJob LoadOfflineJob(const std::vector<std::string>& files, const std::string& job,
                          unsigned threads, bool progress,
                          const std::string& step_pattern = analysis::kDefaultStepPattern,
                          const importers::KinetoReadLimits& limits = {},
                          EventsAfterAnalysis events = EventsAfterAnalysis::kKeep);

}  // namespace gpuspy::cli
