// gpuspy events -> Chrome trace JSON (what ui.perfetto.dev and chrome://tracing open), in
// Kineto's dialect so that `gpuspy import` reads it back: the same categories and args.
//
// Layout: one trace process per profiled process (named "rank R · host · pid P"); host threads
// carry API calls and NVTX ranges; one track per CUDA stream carries kernels, copies, memsets and
// syncs; flow arrows join each launch to its kernel; steps are ranges on a "steps" track and each
// finding is an instant event on its step.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gpuspy/v1/events.pb.h"
#include "gpuspy/v1/identity.pb.h"
#include "gpuspy/v1/report.pb.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::exporters {

struct ExportedProcess {
  uint64_t process_id = 0;  // the collector's id
  v1::ProcessIdentity identity;
  std::vector<v1::Event> events;
  std::vector<v1::StepReport> steps;  // optional: step ranges and findings
};

struct ExportStats {
  uint64_t trace_events = 0;
  uint64_t bytes = 0;
  // ChromeTraceStream::not_exported(): events the format cannot hold, by what they are.
  std::map<std::string, uint64_t> not_exported;
};

// "a re-import of this trace holds 418 events fewer than its source (what the Chrome/Kineto
// format has no place for, or an import does not read back): 412 device memory allocation/free
// records, 6 NVTX marks ..."; empty
// when nothing is lost. The one wording of it, for `gpuspy export` and `gpuspy analyze`.
std::string NotExportedLine(const std::map<std::string, uint64_t>& not_exported);

// The trace as one JSON document in memory (tests, small documents; gpuspyd streams its exports:
// chrome_trace_stream.h).
std::string ChromeTraceJson(const std::vector<ExportedProcess>& processes, ExportStats* stats = nullptr);

// Writes `processes` to `path`; gzip'd when the path ends in ".gz". Timestamps are µs relative to
// "baseTimeNanoseconds" (as newer Kineto writes them): small enough that a double holds them to
// the nanosecond, so nothing is lost on the way through JSON numbers.
absl::Status WriteChromeTrace(const std::string& path, const std::vector<ExportedProcess>& processes,
                              ExportStats* stats = nullptr);

class ProcessByProcess;  // chrome_trace_stream.h
// The same, for events that come in pieces (pages of GetEvents) and are never all in memory:
// `fill` adds them process by process (`processes` sorted by id, their `events` unused);
// timestamps are relative to `base_ns`, which must be at most the earliest of them.
absl::Status WriteChromeTraceFrom(const std::string& path,
                                  const std::vector<ExportedProcess>& processes, int64_t base_ns,
                                  const std::function<absl::Status(ProcessByProcess*)>& fill,
                                  ExportStats* stats = nullptr);


// Selects what an export contains from Query answers: the processes of `job` (or only
// `process_id` when non-zero), their steps numbered in [first_step, last_step] and their events.
// `window` receives the time span of those steps (both 0 when no step was selected).
std::vector<ExportedProcess> AssembleExport(const std::string& job, uint64_t process_id,
                                            int64_t first_step, int64_t last_step,
                                            const v1::ListJobsResponse& jobs,
                                            const v1::GetStepReportResponse& reports,
                                            std::pair<int64_t, int64_t>* window);

}  // namespace gpuspy::exporters
