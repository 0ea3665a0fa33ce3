// GET /api/jobs/{job}/trace: a job's stored data (or a range of its steps) as one Chrome/Perfetto
// trace JSON document (exporters/chrome_trace), written while it is read, page by page of
// GetEvents, so gpuspyd's memory does not grow with the job (issue 22: a 5 M-event job's export
// was assembled whole, as messages and then as one string). `gpuspy export` reads the same pages.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/http/query_params.h"
#include "collector/query/query_engine.h"
#include "exporters/chrome_trace/chrome_trace_stream.h"

namespace gpuspy::collector {

// What an export is, decided before its first byte goes out: after that, a failure can only cut
// the download short, not answer 404.
struct TraceExportPlan {
  std::vector<exporters::ExportedProcess> processes;  // identities and steps; events streamed
  v1::GetEventsRequest events;                        // the job, process and window
  v1::GetEventsResponse first_page;                   // read already (it has the time base)
};

// NotFound for an unknown job or process, and for a step range that selects no step.
absl::StatusOr<TraceExportPlan> PlanTraceExport(QueryEngine* engine, const std::string& job,
                                                const TraceQuery& query);

// The plan's document into `out`, in pieces (the plan's first page is used up). Not OK when
// storage failed part way or `out` took no more (the client went away).
absl::Status WriteTraceExport(QueryEngine* engine, TraceExportPlan* plan,
                              const exporters::ChromeTraceStream::Output& out);

// Both, into one string: for the fuzzers and tests.
absl::StatusOr<std::string> ExportTraceJson(QueryEngine* engine, const std::string& job,
                                            const TraceQuery& query);

}  // namespace gpuspy::collector
