// What one side of a comparison selects, as text: "JOB", "JOB@RANK", "JOB:STEPS",
// "JOB@RANK:STEPS", with STEPS one of "N", "A-B", "A-" (from A on), "-B" (up to B). The CLI reads
// it with trace paths in place of JOB (viewer/cli/run_spec.h), the HTTP API as /api/diff?a=&b=.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace gpuspy::analysis {

struct StepRange {
  std::optional<int64_t> first;
  std::optional<int64_t> last;
  bool Contains(int64_t step) const {
    return (!first || step >= *first) && (!last || step <= *last);
  }
};

// InvalidArgument naming what is wrong ("reversed" for 9-3).
absl::StatusOr<StepRange> ParseStepRange(const std::string& text);

struct RunSelector {
  std::string base;  // the job id (or, in the CLI, a path)
  std::optional<int32_t> rank;
  StepRange steps;
};

// Splits "@RANK" and ":STEPS" off the text after its last '/', so that paths keep theirs.
absl::StatusOr<RunSelector> ParseRunSelector(const std::string& text);

// The selector written back: "bert@3:100-200".
std::string SelectorLabel(const RunSelector& s);

}  // namespace gpuspy::analysis
