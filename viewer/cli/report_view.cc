#include "viewer/cli/report_view.h"

#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/hardware/floor_text.h"
#include "analysis/detector_names.h"
#include "analysis/finding_runs.h"
#include "analysis/replay/what_if_text.h"
#include "analysis/step_source.h"
#include "analysis/text_form.h"
#include "model/units.h"
#include "viewer/cli/comm_view.h"
#include "viewer/cli/composition_view.h"
#include "viewer/cli/finding_run_text.h"
#include "viewer/cli/format.h"
#include "viewer/cli/memory_view.h"
#include "viewer/cli/table.h"

namespace gpuspy::cli {

using analysis::DetectorName;
using analysis::SeverityName;

// process id -> "rank N" (or "pid P@host" when the launcher gave no rank).
std::map<uint64_t, std::string> ProcessLabels(QueryClient& q, const std::string& job) {
  std::map<uint64_t, std::string> labels;
  v1::ListJobsResponse jobs;
  if (!q.Call(&v1::Query::Stub::ListJobs, v1::ListJobsRequest(), &jobs)) return labels;
  for (const auto& j : jobs.jobs()) {
    if (j.job_id() != job) continue;
    for (const auto& p : j.processes()) {
      const auto& id = p.identity();
      labels[p.process_id()] = id.rank() >= 0 ? std::to_string(id.rank())
                                              : absl::StrCat("pid ", id.pid());
    }
  }
  return labels;
}

std::string Label(const std::map<uint64_t, std::string>& labels, uint64_t process_id) {
  auto it = labels.find(process_id);
  return it == labels.end() ? absl::StrCat("p", process_id) : it->second;
}


void PrintStepReports(QueryClient& q, const std::string& job, const v1::GetStepReportResponse& resp,
                      const std::function<void()>& after_table) {
  PrintStepReports(ProcessLabels(q, job), resp, after_table);
}

void PrintStepReports(const std::map<uint64_t, std::string>& labels,
                      const v1::GetStepReportResponse& resp,
                      const std::function<void()>& after_table) {
  // By rank, then step: the server answers in process order, which is arrival order.
  std::vector<const v1::StepReport*> ordered;
  for (const auto& rep : resp.reports()) ordered.push_back(&rep);
  auto rank_key = [&](const v1::StepReport* rep) {
    const std::string l = Label(labels, rep->step().process_id());
    return std::make_pair(l.size(), l);
  };
  std::stable_sort(ordered.begin(), ordered.end(), [&](const auto* a, const auto* b) {
    if (rank_key(a) != rank_key(b)) return rank_key(a) < rank_key(b);
    return a->step().number() < b->step().number();
  });
  // Time windows are no steps (analysis/step_source.h): a job of windows only heads the column
  // WINDOW; in a job that has both, a window's number reads "w3".
  const bool all_windows = !ordered.empty() && std::all_of(ordered.begin(), ordered.end(), [](const auto* r) {
    return analysis::IsTimeWindow(r->step());
  });
  auto number = [all_windows](const v1::StepReport& r) {
    const std::string n = std::to_string(r.step().number());
    return analysis::IsTimeWindow(r.step()) && !all_windows ? "w" + n : n;
  };
  auto noun = [](const v1::StepReport& r) { return std::string(analysis::StepNoun(r.step().source())); };
  Table t({">RANK", all_windows ? ">WINDOW" : ">STEP", ">WALL ms", ">GPU BUSY", ">KERNELS", ">COPIED", ">SYNC-BLOCKED ms",
           "PRIMARY BOTTLENECK", ">LOST ms", "STEADY"});
  for (const v1::StepReport* rp : ordered) {
    const v1::StepReport& rep = *rp;
    const auto& b = rep.breakdown();
    const int64_t lost = rep.findings().empty() ? 0 : rep.findings(0).lost_ns();
    t.Add({Label(labels, rep.step().process_id()), number(rep),
           Ms(b.wall_ns()), Percent(b.gpu_busy_ns(), b.wall_ns()), std::to_string(b.kernel_count()),
           FormatBytes(b.memcpy_bytes()), Ms(b.host_sync_blocked_ns()), DetectorName(rep.primary_bottleneck()),
           Ms(lost), rep.steady_state() ? "yes" : "no"});
  }
  t.Print(std::cout);
  if (after_table) after_table();
  // Runs of steps with the same findings: said once, and their later steps in one line each.
  const std::vector<analysis::FindingRun> runs = analysis::FindingRuns(ordered);
  std::map<std::pair<std::string, int64_t>, int64_t> same_as;  // (rank, step) -> run's first step
  if (!runs.empty()) {
    std::cout << "\nacross steps:\n";
    for (const analysis::FindingRun& r : runs) {
      std::cout << "  " << Describe(r, Label(labels, r.process_id)) << "\n";
    }
  }
  for (const analysis::FindingRun& r : runs) {
    for (const v1::StepReport* rp : ordered) {
      const int64_t n = rp->step().number();
      if (rp->step().process_id() == r.process_id && n > r.first_step && n <= r.last_step) {
        same_as[{Label(labels, r.process_id), n}] = r.first_step;
      }
    }
  }
  for (const v1::StepReport* rp : ordered) {
    const v1::StepReport& rep = *rp;
    const auto& b = rep.breakdown();
    const std::string rank = Label(labels, rep.step().process_id());
    if (auto it = same_as.find({rank, rep.step().number()}); it != same_as.end()) {
      std::cout << "\nrank " << rank << " " << noun(rep) << " " << rep.step().number() << ": "
                << Ms(b.wall_ns()) << " ms, GPU busy " << Percent(b.gpu_busy_ns(), b.wall_ns())
                << ", same findings as " << noun(rep) << " " << it->second << " ("
                << DetectorName(rep.primary_bottleneck());
      if (rep.findings(0).lost_ns() > 0) std::cout << " ~" << Ms(rep.findings(0).lost_ns()) << " ms lost";
      std::cout << ")\n";
      // What may be missing from this step is its own, whatever its findings.
      if (!rep.capture_note().empty()) std::cout << "  ! " << rep.capture_note() << "\n";
      continue;
    }
    std::cout << "\nrank " << Label(labels, rep.step().process_id()) << " " << noun(rep) << " "
              << rep.step().number() << ": " << Ms(b.wall_ns()) << " ms, GPU busy "
              << Percent(b.gpu_busy_ns(), b.wall_ns()) << " (kernels " << Ms(b.kernel_ns())
              << " ms, copies " << Ms(b.memcpy_ns()) << " ms), GPU idle " << Ms(b.gpu_idle_ns())
              << " ms = sync " << Ms(b.idle_sync_blocked_ns()) << " + launch "
              << Ms(b.idle_launch_bound_ns()) << " + input " << Ms(b.idle_input_ns())
              << " + host " << Ms(b.idle_host_other_ns()) << " + in CUDA calls "
              << Ms(b.idle_cuda_call_ns()) << "\n";
    if (!rep.capture_note().empty()) std::cout << "  ! " << rep.capture_note() << "\n";
    if (analysis::IsTimeWindow(rep.step())) {
      std::cout << "  ! " << analysis::WindowExplanation(rep.step().source()) << "\n";
    }
    if (rep.data_quality().insufficient()) {
      std::cout << "  ! insufficient data: " << absl::StrJoin(rep.data_quality().reasons(), "; ")
                << "\n";
    }
    if (!rep.kernel_classes().empty()) std::cout << "  " << GpuTimeLine(rep.kernel_classes()) << "\n";
    if (rep.has_memory()) std::cout << "  " << MemoryLine(rep.memory()) << "\n";
    // Steps without work figures say nothing here: the job summary says once what would give them.
    if (rep.floor().work_size() > 0) {
      const std::string floor = analysis::FloorLine(rep.floor(), b.wall_ns());
      std::cout << "  hardware: " << floor << "\n";
      for (const std::string& w : analysis::WorkLines(rep.floor())) std::cout << "    " << w << "\n";
    }
    for (const std::string& c : analysis::CounterLines(rep.floor())) std::cout << "  " << c << "\n";
    if (rep.has_comm()) {
      std::cout << "  " << CommLine(rep.comm()) << "\n";
      for (const std::string& c : WaitedCollectives(rep.comm())) std::cout << "    " << c << "\n";
    }
    for (const auto& f : rep.findings()) {
      std::cout << "  [" << SeverityName(f.severity()) << "] " << DetectorName(f.detector()) << ": " << f.title();
      if (f.lost_ns() > 0) std::cout << " (~" << Ms(f.lost_ns()) << " ms lost)";
      std::cout << "\n";
      if (f.has_what_if()) std::cout << "      what if: " << analysis::replay::WhatIfLine(f.what_if()) << "\n";
      for (const v1::WhatIf& p : f.partial_fixes()) {
        std::cout << "      partly: " << analysis::replay::WhatIfLine(p) << "\n";
      }
      std::string evidence;
      for (const auto& e : f.evidence()) {
        // Said once above the findings ("! a 1000 ms time window, not a step: ...").
        if (e.key() == analysis::kWindowEvidenceKey) continue;
        evidence += (evidence.empty() ? "" : "; ") + e.key() + "=" + e.value();
      }
      if (!evidence.empty()) std::cout << "      evidence: " << evidence << "\n";
      if (!f.fix_hint().empty()) std::cout << "      fix: " << f.fix_hint() << "\n";
    }
    if (const std::string replay = analysis::replay::ReplayLine(rep.replay()); !replay.empty() && !rep.findings().empty()) {
      std::cout << "  " << replay << "\n";
    }
    if (!rep.top_kernels().empty()) {
      const auto& k = rep.top_kernels(0);
      std::cout << "  top kernel: " << analysis::ClipName(k.name(), 100) << " x" << k.count() << " = "
                << Ms(k.total_ns()) << " ms" << (k.tensor_cores() ? " (tensor cores)" : "") << "\n";
    }
  }
}

}  // namespace gpuspy::cli
