#include "analysis/job_steps.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "analysis/saturating.h"

namespace gpuspy::analysis {
namespace {

bool AllNvtx(const std::vector<RankSteps>& ranks) {
  for (const RankSteps& r : ranks) {
    for (const StepAnalysis& a : *r.steps) {
      if (!absl::StartsWith(a.report.step().source(), "nvtx")) return false;
    }
  }
  return true;
}

struct Span {
  int64_t start_ns, end_ns, number;
};

}  // namespace

std::vector<std::vector<int64_t>> JobStepKeys(const std::vector<RankSteps>& ranks, size_t reference) {
  std::vector<std::vector<int64_t>> keys(ranks.size());
  if (AllNvtx(ranks) || reference >= ranks.size()) {
    for (size_t i = 0; i < ranks.size(); ++i) {
      for (const StepAnalysis& a : *ranks[i].steps) keys[i].push_back(a.report.step().number());
    }
    return keys;
  }
  std::vector<Span> ref;
  for (const StepAnalysis& a : *ranks[reference].steps) {
    const auto& s = a.report.step();
    ref.push_back({SatAdd(s.start_ns(), ranks[reference].unix_offset_ns),
                   SatAdd(s.end_ns(), ranks[reference].unix_offset_ns), s.number()});
  }
  std::sort(ref.begin(), ref.end(), [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; });
  // Keys no reference step has: below every real step number.
  int64_t unpaired = std::numeric_limits<int64_t>::min() / 2;
  static_assert(std::numeric_limits<int64_t>::min() / 2 < kUnpairedStepKeys);
  for (size_t i = 0; i < ranks.size(); ++i) {
    for (const StepAnalysis& a : *ranks[i].steps) {
      const auto& s = a.report.step();
      if (i == reference) {
        keys[i].push_back(s.number());
        continue;
      }
      const int64_t start = SatAdd(s.start_ns(), ranks[i].unix_offset_ns);
      const int64_t end = SatAdd(s.end_ns(), ranks[i].unix_offset_ns);
      int64_t best = 0, key = unpaired++;
      auto it = std::lower_bound(ref.begin(), ref.end(), start,
                                 [](const Span& r, int64_t t) { return r.end_ns <= t; });
      for (; it != ref.end() && it->start_ns < end; ++it) {
        const int64_t overlap = SatSub(std::min(end, it->end_ns), std::max(start, it->start_ns));
        const int64_t shorter = std::min(SatSub(end, start), SatSub(it->end_ns, it->start_ns));
        if (overlap > best && overlap >= kMinStepOverlapShare * shorter) {
          best = overlap;
          key = it->number;
        }
      }
      keys[i].push_back(key);
    }
  }
  return keys;
}

}  // namespace gpuspy::analysis
