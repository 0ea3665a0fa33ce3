#include "collector/http/trace_export.h"

#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpuspy::collector {

absl::StatusOr<TraceExportPlan> PlanTraceExport(QueryEngine* engine, const std::string& job,
                                                const TraceQuery& query) {
  absl::StatusOr<v1::ListJobsResponse> jobs = engine->ListJobs();
  if (!jobs.ok()) return jobs.status();
  v1::GetStepReportRequest rr;
  rr.set_job_id(job);
  rr.set_process_id(query.process_id);
  rr.set_all(true);
  absl::StatusOr<v1::GetStepReportResponse> reports = engine->GetStepReport(rr);
  if (!reports.ok()) return reports.status();
  TraceExportPlan plan;
  std::pair<int64_t, int64_t> window;
  plan.processes = exporters::AssembleExport(job, query.process_id, query.first_step,
                                             query.last_step, *jobs, *reports, &window);
  if (query.has_steps && window.second == 0) {
    return absl::NotFoundError(absl::StrCat("job '", job, "' has no steps in ", query.steps_text));
  }
  plan.events.set_job_id(job);
  plan.events.set_process_id(query.process_id);
  if (query.has_steps) {
    plan.events.set_from_ns(window.first);
    plan.events.set_to_ns(window.second);
  }
  absl::StatusOr<v1::GetEventsResponse> first = engine->GetEvents(plan.events);
  if (!first.ok()) return first.status();
  plan.first_page = *std::move(first);
  return plan;
}

absl::Status WriteTraceExport(QueryEngine* engine, TraceExportPlan* plan,
                              const exporters::ChromeTraceStream::Output& out) {
  exporters::ChromeTraceStream stream(out,
                                      exporters::PagedBaseNs(plan->first_page, plan->processes));
  stream.Begin(plan->processes);
  exporters::ProcessByProcess processes(&stream, &plan->processes);
  v1::GetEventsResponse page = std::move(plan->first_page);
  v1::GetEventsRequest next = plan->events;
  for (;;) {
    processes.Page(&page);
    if (!stream.ok() || page.next_cursor().empty()) break;
    next.set_cursor(page.next_cursor());
    absl::StatusOr<v1::GetEventsResponse> read = engine->GetEvents(next);
    if (!read.ok()) return read.status();
    page = *std::move(read);
  }
  processes.Finish();
  if (!stream.End()) return absl::UnavailableError("the trace's reader went away");
  return absl::OkStatus();
}

absl::StatusOr<std::string> ExportTraceJson(QueryEngine* engine, const std::string& job,
                                            const TraceQuery& query) {
  absl::StatusOr<TraceExportPlan> plan = PlanTraceExport(engine, job, query);
  if (!plan.ok()) return plan.status();
  std::string out;
  absl::Status st = WriteTraceExport(engine, &*plan, [&out](std::string_view piece) {
    out.append(piece);
    return true;
  });
  if (!st.ok()) return st;
  return out;
}

}  // namespace gpuspy::collector
