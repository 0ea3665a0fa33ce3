#include "collector/analysis/step_series.h"

#include <algorithm>
#include <map>
#include <set>

#include "collector/analysis/data_quality.h"
#include "collector/analysis/detectors/memory_growth.h"
#include "collector/analysis/detectors/step_context.h"
#include "collector/analysis/step_report.h"
#include "collector/analysis/step_source.h"

namespace gpuspy::analysis {
namespace {

int64_t MedianWall(const std::vector<StepAnalysis>& steps) {
  std::vector<int64_t> walls;
  for (const auto& s : steps) walls.push_back(s.report.breakdown().wall_ns());
  if (walls.empty()) return 0;
  std::nth_element(walls.begin(), walls.begin() + walls.size() / 2, walls.end());
  return walls[walls.size() / 2];
}

v1::Finding* AddFinding(v1::StepReport* r, const std::string& detector) {
  v1::Finding* f = r->add_findings();
  f->set_detector(detector);
  return f;
}

}  // namespace

StepAnalysis AnalyzeStep(const EventColumns& events, const StringTable& strings,
                         const StepWindow& step, uint64_t process_id) {
  StepAnalysis a;
  a.report = BuildStepReport(events, strings, step, process_id);
  a.kernel_names = DistinctKernelNames(events, strings, step);
  a.collectives = std::make_shared<const StepCollectives>(ExtractStepCollectives(events, strings, step));
  a.memory.step = MeasureWindowMemory(events, strings, step.start_ns, step.end_ns);
  return a;
}

void RankFindings(v1::StepReport* report) {
  auto* findings = report->mutable_findings();
  // A warm-up step's bottleneck is being a warm-up step: whatever else it shows is not what the
  // steady state will look like. A straggler's is being late for the others: its own findings
  // (input, compute) say why, and it costs every waiting rank, not just itself. Memory growing
  // step after step costs no time yet but ends the run in an out-of-memory error, which no
  // speed-up is worth having first.
  const bool insufficient = report->data_quality().insufficient();
  auto rank = [insufficient](const v1::Finding& f) {
    const std::string& d = f.detector();
    // Memory growth is read from allocator totals, which a recording too thin for a timing
    // verdict still carries: it stays the verdict there.
    if (d == "memory_growth" && insufficient) return 5;
    if (d == kInsufficientData) return 4;  // no timing verdict on what the data can't show
    return d == "warmup" ? 3 : d == "straggler" ? 2 : d == "memory_growth" ? 1 : 0;
  };
  std::stable_sort(findings->begin(), findings->end(), [&](const v1::Finding& a, const v1::Finding& b) {
    if (rank(a) != rank(b)) return rank(a) > rank(b);
    return a.lost_ns() > b.lost_ns();
  });
  report->set_primary_bottleneck(findings->empty() ? "none" : findings->Get(0).detector());
}

void AnalyzeStepSeries(std::vector<StepAnalysis>* steps) {
  if (!steps->empty()) {
    v1::StepReport& first = steps->front().report;
    MarkFirstWindow(&first);
    RankFindings(&first);
  }
  std::vector<StepMemoryInput> memory;
  for (const StepAnalysis& s : *steps) memory.push_back(s.memory);
  std::vector<std::optional<v1::StepMemory>> levels = MemoryLevels(memory);
  for (size_t i = 0; i < steps->size(); ++i) {
    if (levels[i]) *(*steps)[i].report.mutable_memory() = std::move(*levels[i]);
  }
  auto mark_windows = [steps] {
    for (StepAnalysis& s : *steps) MarkWindowFindings(&s.report);
  };
  // Time windows are cut by the clock, not by the program's loop: a long window is no warm-up
  // and a short one no outlier, and none is steady (step_source.h). A process's steps all come
  // from one source, so the first says it.
  if (!steps->empty() && IsTimeWindow(steps->front().report.step())) return mark_windows();
  if (steps->size() < 3) return;  // too few steps to tell a steady state
  const int64_t median = MedianWall(*steps);
  if (median <= 0) return;

  // Warm-up: leading steps until the first one close to the median.
  size_t warmup = 0;
  while (warmup < steps->size() &&
         (*steps)[warmup].report.breakdown().wall_ns() > kWarmupFactor * median) {
    ++warmup;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < steps->size(); ++i) {
    v1::StepReport& r = (*steps)[i].report;
    const int64_t wall = r.breakdown().wall_ns();
    std::vector<std::string> fresh;
    for (const std::string& k : (*steps)[i].kernel_names) {
      if (!seen.contains(k)) fresh.push_back(k);
    }
    // What the driver did in a slow step (cuda_api_bound: context creation, module loading),
    // said on its warm-up or outlier finding: why that step is slow.
    const v1::Finding* in_driver = nullptr;
    for (const v1::Finding& g : r.findings()) {
      if (g.detector() == "cuda_api_bound") in_driver = &g;
    }
    const int64_t driver_ns = in_driver != nullptr ? in_driver->lost_ns() : 0;
    const std::string driver_title = in_driver != nullptr ? in_driver->title() : "";
    auto add_driver_evidence = [&](v1::Finding* f) {
      if (driver_ns > 0) AddEvidence(f, "in_cuda_calls", Ns(driver_ns), " of it: " + driver_title);
    };
    if (i < warmup) {
      r.set_steady_state(false);
      v1::Finding* f = AddFinding(&r, "warmup");
      f->set_title("warm-up step: " + FormatMs(wall) + " vs a steady " + FormatMs(median));
      f->set_lost_ns(wall - median);
      f->set_severity(SeverityName(Severity::kInfo));
      AddEvidence(f, "new_kernels", Count(fresh.size()));
      add_driver_evidence(f);
      f->set_fix_hint("excluded from steady-state figures; warm-up covers CUDA start-up (context "
                      "creation, module loading), cuDNN autotuning, torch.compile compilation and "
                      "allocator growth");
    } else if (wall > kOutlierFactor * median) {
      r.set_steady_state(false);
      v1::Finding* f = AddFinding(&r, "outlier_step");
      f->set_title("step " + FormatMs(wall) + " is " + std::to_string(wall * 10 / median / 10) +
                   "." + std::to_string(wall * 10 / median % 10) + "x the median " +
                   FormatMs(median));
      f->set_lost_ns(wall - median);
      f->set_severity(SeverityName(SeverityFor(static_cast<double>(wall - median) / wall)));
      add_driver_evidence(f);
      if (!fresh.empty()) {
        AddEvidence(f, "new_kernels", Count(fresh.size()), ", e.g. " + fresh[0]);
        f->set_fix_hint("new kernels appeared mid-run: a recompile (torch.compile guard "
                        "failure / dynamic shapes) or a new code path; mark dynamic dims or "
                        "pad shapes");
      } else {
        f->set_fix_hint("an occasional slow step: checkpointing, evaluation, logging or a "
                        "straggling input batch");
      }
    } else if (i > warmup && !fresh.empty()) {
      v1::Finding* f = AddFinding(&r, "new_kernels");
      f->set_title(std::to_string(fresh.size()) + " kernels never seen in earlier steps");
      f->set_lost_ns(0);
      f->set_severity(SeverityName(Severity::kInfo));
      AddEvidence(f, "kernel", fresh[0]);
      f->set_fix_hint("a new code path or a recompile; expected only if the step does "
                      "something different (evaluation, checkpoint)");
    }
    seen.insert(fresh.begin(), fresh.end());
  }

  std::vector<v1::StepReport*> reports;
  for (StepAnalysis& s : *steps) reports.push_back(&s.report);
  DetectMemoryGrowth(reports);
  for (v1::StepReport* r : reports) RankFindings(r);
}

}  // namespace gpuspy::analysis
