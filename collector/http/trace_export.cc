#include "collector/http/trace_export.h"

#include <shared_mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codec/expanded_events.h"
#include "exporters/chrome_trace/chrome_trace_writer.h"

namespace gpuspy::collector {

absl::StatusOr<std::string> ExportTraceJson(QueryEngine* engine, const std::string& job,
                                            const TraceQuery& query) {
  absl::StatusOr<v1::ListJobsResponse> jobs = engine->ListJobs();
  if (!jobs.ok()) return jobs.status();
  v1::GetStepReportRequest rr;
  rr.set_job_id(job);
  rr.set_process_id(query.process_id);
  rr.set_all(true);
  absl::StatusOr<v1::GetStepReportResponse> reports = engine->GetStepReport(rr);
  if (!reports.ok()) return reports.status();
  std::pair<int64_t, int64_t> window;
  std::vector<exporters::ExportedProcess> processes = exporters::AssembleExport(
      job, query.process_id, query.first_step, query.last_step, *jobs, *reports, &window);
  if (query.has_steps && window.second == 0) {
    return absl::NotFoundError(absl::StrCat("job '", job, "' has no steps in ", query.steps_text));
  }
  v1::GetEventsRequest er;
  er.set_job_id(job);
  er.set_process_id(query.process_id);
  if (query.has_steps) {
    er.set_from_ns(window.first);
    er.set_to_ns(window.second);
  }
  // Bounds the document (and the collector's memory) for a whole-job export of a long run.
  er.set_limit(5'000'000);
  absl::StatusOr<SelectedEvents> events = engine->ReadEvents(er);
  if (!events.ok()) return events.status();
  // The writer reads v1::Events (the CLI hands it Query answers): expand each process's selected
  // columns straight into its place, without a GetEventsResponse in between.
  for (const ProcessWindowEvents& pe : events->processes) {
    for (exporters::ExportedProcess& p : processes) {
      if (p.process_id != pe.process_id) continue;
      std::shared_lock lock(pe.window.dictionary->mu);
      ToExpandedEvents(pe.window.events, pe.window.dictionary->dict.strings(), &p.events);
    }
  }
  return exporters::ChromeTraceJson(processes);
}

}  // namespace gpuspy::collector
