// A trace file analysed as `gpuspy analyze` analyses it: NVTX steps, else period-detected steps,
// else time windows, then the cross-step pass. For the tests that read ../shared/traces.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/process_analysis.h"
#include "analysis/step_series.h"
#include "importers/kineto/kineto_reader.h"

namespace gpuspy::testing {

inline absl::StatusOr<std::vector<analysis::StepAnalysis>> AnalyzeTraceFile(const std::string& path) {
  absl::StatusOr<importers::KinetoTrace> trace = importers::ReadKinetoTrace(path);
  if (!trace.ok()) return trace.status();
  std::vector<analysis::StepAnalysis> steps = analysis::AnalyzeProcessSteps(
      analysis::CutIntoImportBatches(trace->events), trace->strings, /*process_id=*/1);
  analysis::AnalyzeStepSeries(&steps);
  return steps;
}

}  // namespace gpuspy::testing
