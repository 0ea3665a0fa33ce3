#include "analysis/step_series.h"

#include <algorithm>
#include <map>
#include <set>

#include "analysis/data_quality.h"
#include "analysis/hardware/step_counters.h"
#include "analysis/hardware/step_work.h"
#include "analysis/detectors/memory_growth.h"
#include "analysis/detectors/series_detectors.h"
#include "analysis/detectors/step_context.h"
#include "analysis/step_report.h"
#include "analysis/step_source.h"
#include "analysis/stats.h"

namespace gpuspy::analysis {
namespace {

int64_t MedianWall(const std::vector<StepAnalysis>& steps) {
  std::vector<int64_t> walls;
  for (const auto& s : steps) walls.push_back(s.report.breakdown().wall_ns());
  return stats::Median(std::move(walls));
}

}  // namespace

StepAnalysis AnalyzeStep(const EventColumns& events, const StringTable& strings,
                         const StepWindow& step, uint64_t process_id, KernelClasses* classes) {
  StepAnalysis a;
  KernelClasses own_classes;  // a caller without a process-wide one: classified for this step
  KernelClasses& kc = classes != nullptr ? *classes : own_classes;
  a.report = BuildStepReport(events, strings, step, process_id, kc);
  *a.report.mutable_floor() =
      MeasureStepWork(events, strings, step, a.report.breakdown().gpu_busy_ns(), kc);
  if (std::optional<v1::MeasuredCounters> counters = MeasureStepCounters(events, strings, step, kc)) {
    *a.report.mutable_floor()->mutable_counters() = *std::move(counters);
  }
  a.kernel_names = DistinctKernelNames(events, strings, step);
  a.collectives = std::make_shared<const StepCollectives>(ExtractStepCollectives(events, strings, step, &kc));
  a.memory.step = MeasureWindowMemory(events, strings, step.start_ns, step.end_ns);
  return a;
}

void RankFindings(v1::StepReport* report) {
  auto* findings = report->mutable_findings();
  // A warm-up step's bottleneck is being a warm-up step: whatever else it shows is not what the
  // steady state will look like. Memory growing step after step costs no time yet but ends the
  // run in an out-of-memory error, which no speed-up is worth having first. Everything else,
  // the straggler included, ranks by its lost time: the user acts on the largest gain (a rank
  // whose sync stall costs 6 ms and that keeps the others waiting 1 ms is sync-stalled first).
  const bool insufficient = report->data_quality().insufficient();
  const int64_t wall = report->breakdown().wall_ns();
  auto rank = [insufficient, wall](const v1::Finding& f) {
    const v1::Detector d = f.detector();
    // A cause whose fix the replay says saves (next to) nothing is described, not a verdict: the
    // GPU is busy through the time it names, or its work overlaps the GPU's (kMinVerdictGainShare).
    if (!IsVerdict(f, wall)) return -1;
    // Memory growth is read from allocator totals, which a recording too thin for a timing
    // verdict still carries: it stays the verdict there.
    if (d == v1::memory_growth && insufficient) return 5;
    if (d == v1::insufficient_data) return 4;  // no timing verdict on what the data can't show
    return d == v1::warmup ? 3 : d == v1::memory_growth ? 1 : 0;
  };
  std::stable_sort(findings->begin(), findings->end(), [&](const v1::Finding& a, const v1::Finding& b) {
    if (rank(a) != rank(b)) return rank(a) > rank(b);
    return a.lost_ns() > b.lost_ns();
  });
  report->set_primary_bottleneck(findings->empty() ? v1::none : findings->Get(0).detector());
}

bool IsVerdict(const v1::Finding& f, int64_t wall_ns) {
  if (!f.has_what_if() || f.detector() == v1::warmup) return true;
  return static_cast<double>(f.what_if().gain_ns()) >= kMinVerdictGainShare * static_cast<double>(wall_ns);
}

void AnalyzeStepSeries(std::vector<StepAnalysis>* steps, bool from_first_step) {
  if (!steps->empty() && from_first_step) {
    v1::StepReport& first = steps->front().report;
    MarkFirstWindow(&first);
    RankFindings(&first);
    v1::StepReport& last = steps->back().report;
    MarkLastPeriodStep(&last);
    RankFindings(&last);
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
  while (from_first_step && warmup < steps->size() && IsWarmupWall((*steps)[warmup].report.breakdown().wall_ns(), median)) {
    ++warmup;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < steps->size(); ++i) {
    v1::StepReport& r = (*steps)[i].report;
    SeriesStep s{r.breakdown().wall_ns(), median, {}, nullptr};
    for (const std::string& k : (*steps)[i].kernel_names) {
      if (!seen.contains(k)) s.fresh_kernels.push_back(k);
    }
    for (const v1::Finding& g : r.findings()) {
      if (g.detector() == v1::cuda_api_bound) s.in_driver = &g;
    }
    // One of them at most: a warm-up step, else an outlier, else (not on the first steady step,
    // which meets the kernels warm-up skipped past) new kernels.
    std::optional<v1::Finding> f = i < warmup ? WarmupFinding(s) : DetectOutlierStep(s);
    if (!f && i > warmup) f = DetectNewKernels(s);
    if (f && (f->detector() == v1::warmup || f->detector() == v1::outlier_step)) r.set_steady_state(false);
    seen.insert(s.fresh_kernels.begin(), s.fresh_kernels.end());
    if (f) *r.add_findings() = std::move(*f);
  }

  std::vector<v1::StepReport*> reports;
  for (StepAnalysis& s : *steps) reports.push_back(&s.report);
  DetectMemoryGrowth(reports);
  for (v1::StepReport* r : reports) RankFindings(r);
}

}  // namespace gpuspy::analysis
