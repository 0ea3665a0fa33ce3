#include "viewer/cli/finding_groups.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collector/analysis/step_source.h"
#include "viewer/cli/format.h"

namespace gpuspy::cli {
namespace {

std::vector<std::string> Detectors(const v1::StepReport& r) {
  std::vector<std::string> d;
  for (const auto& f : r.findings()) d.push_back(f.detector());
  return d;
}

// "train.py:57 f x14 (9.5 ms)" -> "train.py:57 f": the first *_site evidence of the finding.
std::string TopSite(const v1::Finding& f) {
  for (const auto& e : f.evidence()) {
    if (e.key() == "call_site" || e.key().ends_with("_site")) {
      const std::string& v = e.value();
      const size_t x = v.rfind(" x");
      return x == std::string::npos ? v : v.substr(0, x);
    }
  }
  return "";
}

}  // namespace

std::vector<FindingRun> FindingRuns(const std::vector<const v1::StepReport*>& ordered,
                                    const std::function<std::string(uint64_t)>& rank_of) {
  std::vector<FindingRun> runs;
  size_t i = 0;
  while (i < ordered.size()) {
    const v1::StepReport& first = *ordered[i];
    const std::string rank = rank_of(first.step().process_id());
    const std::vector<std::string> detectors = Detectors(first);
    size_t j = i + 1;
    while (j < ordered.size() && rank_of(ordered[j]->step().process_id()) == rank &&
           Detectors(*ordered[j]) == detectors) {
      ++j;
    }
    if (j - i >= 2 && !detectors.empty()) {
      FindingRun run{rank, first.step().number(), ordered[j - 1]->step().number(), j - i,
                     detectors, 0, TopSite(first.findings(0)),
                     std::string(analysis::StepNoun(first.step().source()))};
      std::vector<int64_t> lost;
      for (size_t k = i; k < j; ++k) lost.push_back(ordered[k]->findings(0).lost_ns());
      std::nth_element(lost.begin(), lost.begin() + lost.size() / 2, lost.end());
      run.median_lost_ns = lost[lost.size() / 2];
      runs.push_back(std::move(run));
    }
    i = j;
  }
  return runs;
}

std::string Describe(const FindingRun& run) {
  std::string out = absl::StrCat("rank ", run.rank, " ", run.noun, "s ", run.first_step, "-",
                                 run.last_step, " (", run.steps, " ", run.noun, "s): ",
                                 absl::StrJoin(run.detectors, ", "));
  if (run.median_lost_ns > 0) {
    absl::StrAppend(&out, ", ", Ms(run.median_lost_ns), " ms/", run.noun, " lost (median)");
  }
  if (!run.call_site.empty()) absl::StrAppend(&out, " at ", run.call_site);
  return out;
}

}  // namespace gpuspy::cli
