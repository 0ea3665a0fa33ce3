// One side of `gpuspy diff`: trace files or a job in gpuspyd, narrowed to a rank and a step
// range (analysis/diff/run_selector.h): "run/" (a directory of one job's traces),
// "rank0.json.gz", "bert" (a job id), each optionally followed by "@RANK" and ":STEPS":
// "bert@3:100-200", "run/@0".
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/diff/run_selector.h"

namespace gpuspy::cli {

struct RunSpec {
  std::string text;                 // as given
  analysis::RunSelector selector;   // base: the path or the job id
  bool is_path = false;             // an existing file or directory
};

absl::StatusOr<RunSpec> ParseRunSpec(const std::string& text);

// The trace files a path spec stands for: the file itself, or a directory's *.json and
// *.json.gz files in name order.
absl::StatusOr<std::vector<std::string>> TraceFilesOf(const RunSpec& spec);

}  // namespace gpuspy::cli
