// `gpuspy summary`: a job's summary across its steps.
#include "viewer/cli/commands.h"

#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/hardware/floor_text.h"
#include "analysis/detector_names.h"
#include "analysis/text_form.h"
#include "viewer/cli/command_registry.h"
#include "viewer/cli/composition_view.h"
#include "viewer/cli/csv_view.h"
#include "viewer/cli/format.h"
#include "viewer/cli/json_output.h"
#include "viewer/cli/query_client.h"
#include "viewer/cli/table.h"

namespace gpuspy::cli {

using analysis::DetectorName;
using analysis::SeverityName;

int Summary(const GlobalOptions& g, const std::string& job) {
  QueryClient q(g.collector, g.timeout_s);
  v1::GetJobSummaryRequest req;
  req.set_job_id(job);
  v1::GetJobSummaryResponse resp;
  if (!q.Call(&v1::Query::Stub::GetJobSummary, req, &resp)) return 1;
  if (g.json) {
    PrintJson(g, resp);
    return 0;
  }
  if (g.csv) {
    PrintSummaryCsv(resp.summary(), std::cout);
    return 0;
  }
  PrintSummary(resp.summary());
  return 0;
}

void PrintSummary(const v1::JobSummary& s) {
  const int busy = static_cast<int>(s.median_gpu_busy_fraction() * 100 + 0.5);
  if (s.figures_per_window()) {
    // No step to time (analysis/step_source.h): the figures describe time windows.
    std::cout << "job " << s.job_id() << ": " << analysis::CountOf(s.process_count(), "process", "processes")
              << ", no steps found: "
              << s.window_count() << " time windows (no NVTX range matched the step pattern and no "
              << "repeating kernel sequence was found), " << s.event_count() << " events\n"
              << "figures below are per window, not per step: GPU busy " << busy
              << "% (median window)\n";
  } else {
    std::cout << "job " << s.job_id() << ": " << analysis::CountOf(s.process_count(), "process", "processes")
              << ", " << s.step_count()
              << " steps (" << s.steady_step_count() << " steady";
    if (s.window_count() > 0) std::cout << "; " << s.window_count() << " of them time windows, not steps";
    std::cout << "), " << s.event_count() << " events\n"
              << "median step " << Ms(s.median_step_wall_ns()) << " ms, GPU busy " << busy << "%\n";
  }
  const char* unit = s.figures_per_window() ? "window" : "step";
  if (!s.bottlenecks().empty()) {
    std::cout << "\n";
    Table t({"PRIMARY BOTTLENECK", s.figures_per_window() ? ">WINDOWS" : ">STEPS", ">MEDIAN LOST ms"});
    for (const auto& b : s.bottlenecks()) {
      t.Add({DetectorName(b.detector()), std::to_string(b.steps()), Ms(b.median_lost_ns())});
    }
    t.Print(std::cout);
  }
  if (!s.findings().empty()) {
    std::cout << "\n";
    Table t({"FINDING", "SEVERITY", s.figures_per_window() ? ">WINDOWS" : ">STEPS",
             std::string(">LOST ms/") + unit});
    for (const v1::JobFinding& f : s.findings()) {
      t.Add({DetectorName(f.detector()), SeverityName(f.severity()), absl::StrCat(f.steps(), "/", f.of_steps()), Ms(f.lost_per_step_ns())});
    }
    t.Print(std::cout);
  }
  if (s.has_largest_gain()) {
    const v1::ExpectedGain& g = s.largest_gain();
    std::cout << "\nlargest expected gain: " << DetectorName(g.detector()) << ", ~" << Ms(g.lost_per_step_ns())
              << " ms per " << (s.figures_per_window() ? "window" : "steady step") << " (found in "
              << g.steps() << " of them)\n";
    if (!g.fix_hint().empty()) std::cout << "  fix: " << g.fix_hint() << "\n";
  }
  if (const std::string floor = analysis::JobFloorLine(s.floor()); !floor.empty()) {
    std::cout << "\nhardware: " << floor << "\n";
  }
  if (!s.kernel_classes().empty()) {
    std::cout << "\n";
    PrintGpuTimeTable(s.kernel_classes(), std::cout);
  }
  if (!s.top_kernels().empty()) {
    std::cout << "\n";
    Table t({"TOP KERNEL", ">COUNT", ">TOTAL ms", ">MEDIAN", "TENSOR CORES"});
    for (const auto& k : s.top_kernels()) {
      t.Add({analysis::ClipName(k.name(), 80), std::to_string(k.count()), Ms(k.total_ns()),
             FormatDuration(k.median_ns()), k.tensor_cores() ? "yes" : "no"});
    }
    t.Print(std::cout);
  }
}

RegisteredCommand RegisterSummaryCommand(CLI::App& app, const GlobalOptions& g) {
  auto job = std::make_shared<std::string>();
  auto* summary = app.add_subcommand("summary", "Steady-state summary of a job");
  summary->add_option("--job", *job, "Job id")->required();
  return {summary, [&g, job] { return Summary(g, *job); }};
}

}  // namespace gpuspy::cli
