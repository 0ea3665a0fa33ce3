#include "analysis/finding_runs.h"

#include "analysis/detector_names.h"
#include "analysis/stats.h"
#include "analysis/step_source.h"

namespace gpuspy::analysis {
namespace {

std::vector<std::string> Detectors(const v1::StepReport& r) {
  std::vector<std::string> d;
  for (const auto& f : r.findings()) d.push_back(DetectorName(f.detector()));
  return d;
}

std::string FirstCallSite(const v1::Finding& f) {
  for (const v1::Evidence& e : f.evidence()) {
    if (!e.call_site().empty()) return e.call_site();
  }
  return "";
}

}  // namespace

std::vector<FindingRun> FindingRuns(const std::vector<const v1::StepReport*>& ordered) {
  std::vector<FindingRun> runs;
  size_t i = 0;
  while (i < ordered.size()) {
    const v1::StepReport& first = *ordered[i];
    const uint64_t process = first.step().process_id();
    const std::vector<std::string> detectors = Detectors(first);
    size_t j = i + 1;
    while (j < ordered.size() && ordered[j]->step().process_id() == process &&
           Detectors(*ordered[j]) == detectors) {
      ++j;
    }
    if (j - i >= 2 && !detectors.empty()) {
      std::vector<int64_t> lost;
      for (size_t k = i; k < j; ++k) lost.push_back(ordered[k]->findings(0).lost_ns());
      runs.push_back({process, first.step().number(), ordered[j - 1]->step().number(), j - i, detectors,
                      stats::Median(std::move(lost)), FirstCallSite(first.findings(0)),
                      std::string(StepNoun(first.step().source()))});
    }
    i = j;
  }
  return runs;
}

}  // namespace gpuspy::analysis
