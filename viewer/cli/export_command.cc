#include "viewer/cli/export_command.h"

#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>

#include "analysis/diff/run_selector.h"
#include "analysis/text_form.h"
#include "exporters/chrome_trace/chrome_trace_stream.h"
#include "exporters/chrome_trace/chrome_trace_writer.h"
#include "viewer/cli/command_registry.h"
#include "viewer/cli/progress_line.h"
#include "viewer/cli/query_client.h"
#include "viewer/cli/rank_option.h"

namespace gpuspy::cli {

int Export(const GlobalOptions& g, const ExportOptions& o) {
  int64_t first = std::numeric_limits<int64_t>::min(), last = std::numeric_limits<int64_t>::max();
  if (!o.steps.empty()) {
    absl::StatusOr<analysis::StepRange> range = analysis::ParseStepRange(o.steps);
    if (!range.ok()) {
      std::fprintf(stderr, "gpuspy export: --%s\n", std::string(range.status().message()).c_str());
      return 2;
    }
    first = range->first.value_or(first);
    last = range->last.value_or(last);
  }
  QueryClient q(g.collector, std::max(g.timeout_s, 60.0));
  v1::ListJobsResponse jobs;
  if (!q.Call(&v1::Query::Stub::ListJobs, v1::ListJobsRequest(), &jobs)) return 1;
  v1::GetStepReportRequest rreq;
  rreq.set_job_id(o.job);
  rreq.set_process_id(o.process);
  rreq.set_all(true);
  v1::GetStepReportResponse reports;
  if (!q.Call(&v1::Query::Stub::GetStepReport, rreq, &reports)) return 1;
  std::pair<int64_t, int64_t> window;
  std::vector<exporters::ExportedProcess> out =
      exporters::AssembleExport(o.job, o.process, first, last, jobs, reports, &window);
  if (out.empty()) {
    std::fprintf(stderr, "gpuspy: unknown job '%s'\n", o.job.c_str());
    return 1;
  }
  if (!o.steps.empty() && window.second == 0) {
    std::fprintf(stderr, "gpuspy export: job '%s' has no steps in %s\n", o.job.c_str(), o.steps.c_str());
    return 1;
  }
  v1::GetEventsRequest ereq;
  ereq.set_job_id(o.job);
  ereq.set_process_id(o.process);
  if (!o.steps.empty()) {
    ereq.set_from_ns(window.first);
    ereq.set_to_ns(window.second);
  }
  // Page by page into the file: the job's events are never all held, here or in gpuspyd.
  v1::GetEventsResponse page;
  if (!q.Call(&v1::Query::Stub::GetEvents, ereq, &page)) return 1;
  bool failed = false;  // QueryClient printed why
  exporters::ExportStats stats;
  // The job's stored events bound what a whole-job export reads (a step range reads fewer: no
  // percentage then, the count alone).
  uint64_t total = 0;
  for (const v1::JobInfo& j : jobs.jobs()) {
    if (j.job_id() != o.job || !o.steps.empty()) continue;
    for (const auto& p : j.processes()) {
      if (o.process == 0 || p.process_id() == o.process) total += p.event_count();
    }
  }
  uint64_t events_read = 0;
  ProgressLine line(ProgressWanted(g));
  absl::Status st = exporters::WriteChromeTraceFrom(
      o.output, out, exporters::PagedBaseNs(page, out),
      [&](exporters::ProcessByProcess* processes) {
        for (;;) {
          for (const v1::ProcessEvents& p : page.processes()) events_read += p.events_size();
          line.Show(ProgressText("exporting job " + o.job, events_read, total, ProgressUnit::kEvents));
          processes->Page(&page);
          if (page.next_cursor().empty()) return absl::OkStatus();
          ereq.set_cursor(page.next_cursor());
          if (!q.Call(&v1::Query::Stub::GetEvents, ereq, &page)) {
            failed = true;
            return absl::UnavailableError("reading events failed");
          }
        }
      },
      &stats);
  line.Clear();
  if (failed) {
    std::remove(o.output.c_str());  // a cut trace would open as if it were the whole job
    return 1;
  }
  if (!st.ok()) {
    std::fprintf(stderr, "gpuspy export: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  std::cout << "wrote " << o.output << ": " << stats.trace_events << " trace events from "
            << analysis::CountOf(out.size(), "process", "processes") << "; open it in https://ui.perfetto.dev or chrome://tracing\n";
  if (const std::string line = exporters::NotExportedLine(stats.not_exported); !line.empty()) {
    std::cout << line << "\n";
  }
  return 0;
}

RegisteredCommand RegisterExportCommand(CLI::App& app, const GlobalOptions& g) {
  struct Options {
    ExportOptions x;
    int32_t rank = -1;
  };
  auto o = std::make_shared<Options>();
  ExportOptions& x = o->x;
  auto* exp = app.add_subcommand("export", "Write a job (or some steps) as a Perfetto/Chrome trace");
  exp->add_option("--job", x.job, "Job id")->required();
  exp->add_option("--steps", x.steps, "Step N or range A-B (default: everything)");
  auto* process = exp->add_option("--process", x.process, "Only this process id");
  exp->add_option("--rank", o->rank, "Only the process that ran as this rank")
      ->check(CLI::NonNegativeNumber)->excludes(process);
  exp->add_option("-o,--output", x.output, "Output file (.json or .json.gz)")->required();
  return {exp, [&g, o] {
            if (!ResolveRank(g, o->x.job, o->rank, &o->x.process)) return 1;
            return Export(g, o->x);
          }};
}

}  // namespace gpuspy::cli
