// gpuspy events -> Chrome trace JSON (what ui.perfetto.dev and chrome://tracing open), in
// Kineto's dialect so that `gpuspy import` reads it back: the same categories and args.
//
// Layout: one trace process per profiled process (named "rank R · host · pid P"); host threads
// carry API calls and NVTX ranges; one track per CUDA stream carries kernels, copies, memsets and
// syncs; flow arrows join each launch to its kernel; steps are ranges on a "steps" track and each
// finding is an instant event on its step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gpuspy/v1/events.pb.h"
#include "gpuspy/v1/identity.pb.h"
#include "gpuspy/v1/report.pb.h"

namespace gpuspy::exporters {

struct ExportedProcess {
  v1::ProcessIdentity identity;
  std::vector<v1::Event> events;
  std::vector<v1::StepReport> steps;  // optional: step ranges and findings
};

struct ExportStats {
  uint64_t trace_events = 0;
  uint64_t bytes = 0;
};

// Writes `processes` to `path`; gzip'd when the path ends in ".gz". Timestamps are µs relative to
// "baseTimeNanoseconds" (as newer Kineto writes them): small enough that a double holds them to
// the nanosecond, so nothing is lost on the way through JSON numbers.
absl::Status WriteChromeTrace(const std::string& path, const std::vector<ExportedProcess>& processes,
                              ExportStats* stats = nullptr);


}  // namespace gpuspy::exporters
