#include "analysis/job_findings.h"

#include <algorithm>
#include <map>
#include <string>

#include "analysis/stats.h"

namespace gpuspy::analysis {

int SeverityRank(const std::string& severity) {
  if (severity == "critical") return 2;
  if (severity == "warning") return 1;
  return 0;
}

std::vector<v1::JobFinding> AggregateFindings(const std::vector<const v1::StepReport*>& basis,
                                              bool steady_only) {
  struct Acc {
    std::vector<int64_t> lost;
    int64_t total_ns = 0;
    std::string severity = "info";
    const v1::StepReport* worst = nullptr;
    const v1::Finding* worst_finding = nullptr;
  };
  std::map<std::string, Acc> by_detector;
  for (const v1::StepReport* r : basis) {
    for (const v1::Finding& f : r->findings()) {
      Acc& a = by_detector[f.detector()];
      const int64_t lost = std::max<int64_t>(0, f.lost_ns());
      a.lost.push_back(lost);
      a.total_ns += lost;
      if (SeverityRank(f.severity()) > SeverityRank(a.severity)) a.severity = f.severity();
      if (a.worst_finding == nullptr || lost > a.worst_finding->lost_ns()) {
        a.worst = r;
        a.worst_finding = &f;
      }
    }
  }
  std::vector<v1::JobFinding> out;
  for (auto& [detector, a] : by_detector) {
    v1::JobFinding& j = out.emplace_back();
    j.set_detector(detector);
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
    return SeverityRank(x.severity()) > SeverityRank(y.severity());
  });
  return out;
}

}  // namespace gpuspy::analysis
