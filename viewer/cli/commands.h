// The gpuspy CLI's query commands and `run`, each defined in its own <name>_command.cc (the
// commands with more options have their own header too: attach, export, import, report, spill).
// Each returns the process exit code and prints either a human view or (with --json) the Query
// response as JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::cli {

// How --json writes (json_output.h): protobuf's JSON mapping, or flat with numbers as numbers.
enum class JsonStyle { kProto, kFlat };

struct GlobalOptions {
  std::string collector;
  bool json = false;
  JsonStyle json_style = JsonStyle::kProto;
  // --csv (csv_view.h): report, summary and analyze print their table as CSV.
  bool csv = false;
  double timeout_s = 10;
};

struct EventsOptions {
  std::string job;
  uint64_t process = 0;
  int64_t from_ns = 0;
  int64_t to_ns = 0;
  uint32_t limit = 1000;
};

// Every job, one line each; with `per_process`, one line per process (of `job` when given).
int Jobs(const GlobalOptions& g, const std::string& job, bool per_process);
// `gpuspy jobs --names` (hidden): the job ids, one a line, for the shell completion.
int JobNames(const GlobalOptions& g);
// `jobs delete` / `jobs rename` (jobs_admin_command.cc).
int DeleteJob(const GlobalOptions& g, const std::string& job, bool force);
int RenameJob(const GlobalOptions& g, const std::string& job, const std::string& new_job);
// `gpuspy jobs set-step-pattern J RE`: exit 2 for a pattern that is no RE2 regex (said in one
// line, nothing sent), 1 when gpuspyd refuses.
int SetStepPattern(const GlobalOptions& g, const std::string& job, const std::string& pattern);
int Steps(const GlobalOptions& g, const std::string& job, uint64_t process);
int Summary(const GlobalOptions& g, const std::string& job);
// The table `gpuspy summary` prints (also under `gpuspy analyze`).
void PrintSummary(const v1::JobSummary& summary);
int Events(const GlobalOptions& g, const EventsOptions& e);
int Stats(const GlobalOptions& g);
// Replaces this process with `command` under gpuspy (LD_PRELOAD); returns only on failure.
int Run(const GlobalOptions& g, const std::string& job, bool counters,
        const std::vector<std::string>& command);

}  // namespace gpuspy::cli
