#include "analysis/hardware/job_floor.h"
#include "analysis/job_summary.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/detector_names.h"
#include "analysis/job_findings.h"
#include "analysis/step_source.h"
#include "analysis/stats.h"

namespace gpuspy::analysis {
namespace {


}  // namespace

v1::JobSummary SummarizeJob(const std::string& job_id, const std::vector<v1::StepReport>& steps,
                            uint64_t process_count, uint64_t event_count) {
  v1::JobSummary out;
  out.set_job_id(job_id);
  out.set_process_count(process_count);
  out.set_step_count(steps.size());
  out.set_event_count(event_count);

  std::vector<const v1::StepReport*> steady, real, windows;
  uint64_t window_count = 0;
  bool has_steps = false;  // any step that is no window, whatever its data
  for (const auto& s : steps) {
    window_count += IsTimeWindow(s.step());
    has_steps |= !IsTimeWindow(s.step());
    if (s.data_quality().insufficient()) continue;  // no figure comes from a step without data
    if (s.steady_state()) steady.push_back(&s);
    (IsTimeWindow(s.step()) ? windows : real).push_back(&s);
  }
  out.set_window_count(window_count);
  // The figures come from the steady steps; without any, from every step; a job whose steps
  // were not found at all is described per window, and says so (windows are never steady).
  const bool per_window = !has_steps && !windows.empty();
  out.set_figures_per_window(per_window);
  const bool steady_only = !steady.empty();
  if (steady.empty()) steady = per_window ? windows : real;
  out.set_steady_step_count(per_window ? 0 : steady.size());

  std::vector<int64_t> walls;
  std::vector<double> busy;
  // By name: bottlenecks of as many steps list in alphabetical order.
  std::map<std::string, std::vector<int64_t>> lost_by_bottleneck;
  struct KernelAcc {
    uint64_t count = 0;
    int64_t total_ns = 0;
    std::vector<int64_t> medians;
    bool tensor_cores = false;
  };
  absl::flat_hash_map<std::string, KernelAcc> kernels;
  // The change with the largest expected gain: per detector, the lost time of its findings.
  struct GainAcc {
    std::vector<int64_t> lost;
    int64_t total_ns = 0;
    int64_t best_ns = -1;
    std::string fix_hint;
  };
  std::map<v1::Detector, GainAcc> gains;
  // Where the GPU time goes: each class's kernel time summed over the steady steps.
  std::map<std::string, std::pair<int64_t, uint64_t>> classes;
  int64_t class_total_ns = 0;
  for (const v1::StepReport* s : steady) {
    for (const v1::Finding& f : s->findings()) {
      if (f.lost_ns() <= 0) continue;
      GainAcc& g = gains[f.detector()];
      g.lost.push_back(f.lost_ns());
      g.total_ns += f.lost_ns();
      if (f.lost_ns() > g.best_ns) {
        g.best_ns = f.lost_ns();
        g.fix_hint = f.fix_hint();
      }
    }
    for (const v1::KernelClassTime& c : s->kernel_classes()) {
      auto& [ns, count] = classes[c.kernel_class()];
      ns += c.ns();
      count += c.count();
      class_total_ns += c.ns();
    }
    const auto& b = s->breakdown();
    walls.push_back(b.wall_ns());
    busy.push_back(b.wall_ns() > 0 ? static_cast<double>(b.gpu_busy_ns()) / b.wall_ns() : 0.0);
    if (s->primary_bottleneck() != v1::DETECTOR_UNSPECIFIED && s->primary_bottleneck() != v1::none) {
      const int64_t lost = s->findings_size() > 0 ? s->findings(0).lost_ns() : 0;
      lost_by_bottleneck[DetectorName(s->primary_bottleneck())].push_back(lost);
    }
    for (const auto& k : s->top_kernels()) {
      KernelAcc& a = kernels[k.name()];
      a.count += k.count();
      a.total_ns += k.total_ns();
      a.medians.push_back(k.median_ns());
      a.tensor_cores = k.tensor_cores();
    }
  }
  if (!per_window) out.set_median_step_wall_ns(stats::Median(walls));
  out.set_median_gpu_busy_fraction(stats::Median(busy));

  std::vector<std::pair<std::string, std::vector<int64_t>>> ranked(lost_by_bottleneck.begin(),
                                                                   lost_by_bottleneck.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second.size() > b.second.size();
  });
  for (auto& [detector, lost] : ranked) {
    auto* bc = out.add_bottlenecks();
    bc->set_detector(ParseDetector(detector).value_or(v1::DETECTOR_UNSPECIFIED));
    bc->set_steps(lost.size());
    bc->set_median_lost_ns(stats::Median(lost));
  }

  std::vector<std::pair<std::string, KernelAcc*>> top;
  for (auto& [name, acc] : kernels) top.emplace_back(name, &acc);
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
    return a.second->total_ns != b.second->total_ns ? a.second->total_ns > b.second->total_ns
                                                    : a.first < b.first;
  });
  if (top.size() > 10) top.resize(10);
  for (auto& [name, acc] : top) {
    auto* k = out.add_top_kernels();
    k->set_name(name);
    k->set_count(acc->count);
    k->set_total_ns(acc->total_ns);
    k->set_median_ns(stats::Median(acc->medians));
    k->set_tensor_cores(acc->tensor_cores);
  }

  for (const auto& [name, v] : classes) {
    v1::KernelClassTime* c = out.add_kernel_classes();
    c->set_kernel_class(name);
    c->set_ns(v.first);
    c->set_count(v.second);
    c->set_share(class_total_ns > 0 ? static_cast<double>(v.first) / class_total_ns : 0.0);
  }
  std::stable_sort(out.mutable_kernel_classes()->begin(), out.mutable_kernel_classes()->end(),
                   [](const auto& a, const auto& b) { return a.ns() > b.ns(); });

  if (!steady.empty()) {
    for (v1::JobFinding& f : AggregateFindings(steady, steady_only)) *out.add_findings() = std::move(f);
  }
  // The largest expected gain is the first of those findings, so the two never name different
  // detectors (ties in lost time go the same way); unset when it loses no time.
  const auto it = out.findings().empty() ? gains.end() : gains.find(out.findings(0).detector());
  if (it != gains.end()) {
    const GainAcc* best = &it->second;
    v1::ExpectedGain* gain = out.mutable_largest_gain();
    gain->set_detector(it->first);
    gain->set_steps(best->lost.size());
    gain->set_median_lost_ns(stats::Median(best->lost));
    gain->set_total_lost_ns(best->total_ns);
    gain->set_fix_hint(best->fix_hint);
    gain->set_lost_per_step_ns(best->total_ns / static_cast<int64_t>(steady.size()));
  }
  *out.mutable_floor() = SummarizeFloor(steady);
  return out;
}

}  // namespace gpuspy::analysis
