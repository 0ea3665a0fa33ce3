#include "analysis/step_time_straggler.h"

#include <algorithm>
#include <map>

#include "analysis/detectors/step_context.h"
#include "analysis/stats.h"

namespace gpuspy::analysis {
void AddStepTimeStragglers(const std::vector<std::vector<StepAnalysis>*>& ranks) {
  if (ranks.size() < 2) return;
  // step number -> (rank index, wall)
  std::map<int64_t, std::vector<std::pair<size_t, StepAnalysis*>>> by_step;
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (StepAnalysis& s : *ranks[r]) {
      if (s.report.steady_state()) by_step[s.report.step().number()].push_back({r, &s});
    }
  }
  std::vector<int> slowest(ranks.size(), 0);
  int compared = 0;
  for (auto& [number, entries] : by_step) {
    if (entries.size() != ranks.size()) continue;
    std::vector<int64_t> walls;
    for (auto& [r, s] : entries) walls.push_back(s->report.breakdown().wall_ns());
    std::vector<int64_t> sorted = walls;
    std::sort(sorted.begin(), sorted.end());
    // The lower median: with 2 ranks the upper one would be the slow rank itself.
    const int64_t median = stats::LowerMedian(walls);
    ++compared;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (walls[i] > kStragglerFactor * median && walls[i] == sorted.back()) slowest[entries[i].first]++;
    }
  }
  if (compared == 0) return;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (slowest[r] * 2 < compared) continue;
    for (auto& [number, entries] : by_step) {
      if (entries.size() != ranks.size()) continue;
      std::vector<int64_t> walls;
      StepAnalysis* mine = nullptr;
      for (auto& [idx, s] : entries) {
        walls.push_back(s->report.breakdown().wall_ns());
        if (idx == r) mine = s;
      }
      const int64_t median = stats::LowerMedian(std::move(walls));
      const int64_t lag = mine->report.breakdown().wall_ns() - median;
      if (lag <= 0) continue;
      v1::Finding* f = mine->report.add_findings();
      f->set_detector(v1::straggler);
      f->set_title("this rank is the slowest in " + std::to_string(slowest[r]) + "/" +
                   std::to_string(compared) + " steps; the others wait ~" + FormatMs(lag));
      f->set_lost_ns(lag);
      f->set_severity(SeverityFor(static_cast<double>(lag) / mine->report.breakdown().wall_ns()));
      AddEvidence(f, "median_rank_step", Ns(median));
      f->set_fix_hint("look at this rank's own findings (input stall, syncs) and its host: "
                      "uneven data sharding, a slower GPU/NIC, or CPU contention");
      RankFindings(&mine->report);
    }
  }
}

}  // namespace gpuspy::analysis
