#include "analysis/job_findings.h"

#include <algorithm>
#include <map>
#include <string>

#include "analysis/detector_names.h"
#include "analysis/stats.h"

namespace gpuspy::analysis {

std::vector<v1::JobFinding> AggregateFindings(const std::vector<const v1::StepReport*>& basis,
                                              bool steady_only) {
  struct Acc {
    std::vector<int64_t> lost;
    int64_t total_ns = 0;
    v1::Detector detector = v1::DETECTOR_UNSPECIFIED;
    v1::Severity severity = v1::info;  // an unset severity ranks as info
    const v1::StepReport* worst = nullptr;
    const v1::Finding* worst_finding = nullptr;
  };
  // By name: ties in lost time and severity list in the detectors' alphabetical order.
  std::map<std::string, Acc> by_detector;
  for (const v1::StepReport* r : basis) {
    for (const v1::Finding& f : r->findings()) {
      Acc& a = by_detector[DetectorName(f.detector())];
      a.detector = f.detector();
      const int64_t lost = std::max<int64_t>(0, f.lost_ns());
      a.lost.push_back(lost);
      a.total_ns += lost;
      a.severity = std::max(a.severity, f.severity());  // values are ordered: the worst
      if (a.worst_finding == nullptr || lost > a.worst_finding->lost_ns()) {
        a.worst = r;
        a.worst_finding = &f;
      }
    }
  }
  std::vector<v1::JobFinding> out;
  for (auto& [name, a] : by_detector) {
    v1::JobFinding& j = out.emplace_back();
    j.set_detector(a.detector);
    j.set_severity(a.severity);
    j.set_steps(a.lost.size());
    j.set_of_steps(basis.size());
    j.set_steady_only(steady_only);
    j.set_lost_per_step_ns(a.total_ns / static_cast<int64_t>(basis.size()));
    j.set_median_lost_ns(stats::Median(a.lost));
    j.set_title(a.worst_finding->title());
    j.set_fix_hint(a.worst_finding->fix_hint());
    *j.mutable_worst_step() = a.worst->step();
  }
  std::stable_sort(out.begin(), out.end(), [](const v1::JobFinding& x, const v1::JobFinding& y) {
    if (x.lost_per_step_ns() != y.lost_per_step_ns()) return x.lost_per_step_ns() > y.lost_per_step_ns();
    return x.severity() > y.severity();
  });
  return out;
}

}  // namespace gpuspy::analysis
