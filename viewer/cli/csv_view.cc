#include "viewer/cli/csv_view.h"

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/detector_names.h"
#include "viewer/cli/csv_writer.h"
#include "viewer/cli/report_view.h"

namespace gpuspy::cli {
namespace {

std::string N(int64_t v) { return std::to_string(v); }
std::string U(uint64_t v) { return std::to_string(v); }
std::string B(bool v) { return v ? "true" : "false"; }

}  // namespace

void PrintStepCsv(const std::map<uint64_t, std::string>& labels,
                  const v1::GetStepReportResponse& resp, std::ostream& out) {
  std::vector<const v1::StepReport*> ordered;
  for (const auto& rep : resp.reports()) ordered.push_back(&rep);
  std::stable_sort(ordered.begin(), ordered.end(), [&](const auto* a, const auto* b) {
    const std::string la = Label(labels, a->step().process_id());
    const std::string lb = Label(labels, b->step().process_id());
    if (la != lb) return std::make_pair(la.size(), la) < std::make_pair(lb.size(), lb);
    return a->step().number() < b->step().number();
  });
  WriteCsvRow(out, {"rank", "process_id", "number", "source", "kind", "start_ns", "end_ns",
                    "wall_ns", "gpu_busy_ns", "kernel_ns", "kernel_count", "memcpy_bytes",
                    "host_sync_blocked_ns", "gpu_idle_ns", "primary_bottleneck", "lost_ns",
                    "steady_state"});
  for (const v1::StepReport* r : ordered) {
    const v1::Step& s = r->step();
    const v1::StepBreakdown& b = r->breakdown();
    // The primary finding's lost time: the human table's LOST column.
    const int64_t lost = r->findings().empty() ? 0 : r->findings(0).lost_ns();
    WriteCsvRow(out, {Label(labels, s.process_id()), U(s.process_id()), N(s.number()), s.source(),
                      v1::StepKind_Name(r->kind()), N(s.start_ns()), N(s.end_ns()), N(b.wall_ns()),
                      N(b.gpu_busy_ns()), N(b.kernel_ns()), U(b.kernel_count()), U(b.memcpy_bytes()),
                      N(b.host_sync_blocked_ns()), N(b.gpu_idle_ns()), analysis::DetectorName(r->primary_bottleneck()),
                      N(lost), B(r->steady_state())});
  }
}

void PrintSummaryCsv(const v1::JobSummary& s, std::ostream& out) {
  WriteCsvRow(out, {"job_id", "process_count", "step_count", "steady_step_count", "window_count",
                    "median_step_wall_ns", "median_gpu_busy_fraction", "event_count", "detector",
                    "severity", "steps", "of_steps", "lost_per_step_ns", "median_lost_ns", "title",
                    "fix_hint"});
  const std::vector<std::string> job = {s.job_id(), U(s.process_count()), U(s.step_count()),
                                        U(s.steady_step_count()), U(s.window_count()),
                                        N(s.median_step_wall_ns()),
                                        // the shortest text that reads back as the same double
                                        nlohmann::json(s.median_gpu_busy_fraction()).dump(),
                                        U(s.event_count())};
  if (s.findings().empty()) {
    std::vector<std::string> row = job;
    row.resize(16);
    WriteCsvRow(out, row);
  }
  for (const v1::JobFinding& f : s.findings()) {
    std::vector<std::string> row = job;
    for (std::string v : {analysis::DetectorName(f.detector()), analysis::SeverityName(f.severity()), U(f.steps()), U(f.of_steps()),
                          N(f.lost_per_step_ns()), N(f.median_lost_ns()), f.title(), f.fix_hint()}) {
      row.push_back(std::move(v));
    }
    WriteCsvRow(out, row);
  }
}

}  // namespace gpuspy::cli
