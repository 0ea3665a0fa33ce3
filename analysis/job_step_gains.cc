#include "analysis/job_step_gains.h"

#include <algorithm>
#include <map>
#include <string>

#include "analysis/detectors/step_context.h"
#include "analysis/evidence.h"

namespace gpuspy::analysis {
namespace {

// The evidence a previous run left with the rank's own gain, or nullptr.
const v1::Evidence* OwnGainNoted(const v1::Finding& f) {
  for (const v1::Evidence& e : f.evidence()) {
    if (e.key() == kThisRankAloneKey) return &e;
  }
  return nullptr;
}

// The rank's own gain for `f`: what its replay (or attribution) said before the job was seen.
int64_t OwnGain(const v1::Finding& f) {
  const v1::Evidence* noted = OwnGainNoted(f);
  return noted != nullptr ? static_cast<int64_t>(noted->quantity()) : f.lost_ns();
}

// The step of a rank with no waits: what its own work takes.
int64_t OwnWork(const v1::StepReport& r) {
  return std::max<int64_t>(0, r.breakdown().wall_ns() - r.comm().exposed_wait_ns());
}

}  // namespace

void SetJobGains(const std::vector<v1::StepReport*>& reports, bool uncaptured_peer) {
  if (reports.size() + (uncaptured_peer ? 1 : 0) < 2) return;
  int64_t slowest = 0;
  for (const v1::StepReport* r : reports) slowest = std::max(slowest, OwnWork(*r));
  // An uncaptured late rank arrived last: its own work is at least the slowest captured step.
  if (uncaptured_peer) {
    for (const v1::StepReport* r : reports) slowest = std::max(slowest, r->breakdown().wall_ns());
  }
  // Per detector, per rank: the rank's own work with that fix.
  std::map<v1::Detector, std::vector<int64_t>> fixed_own;
  for (size_t i = 0; i < reports.size(); ++i) {
    for (const v1::Finding& f : reports[i]->findings()) {
      auto [it, fresh] = fixed_own.try_emplace(f.detector());
      if (fresh) {
        for (const v1::StepReport* r : reports) it->second.push_back(OwnWork(*r));
      }
      it->second[i] = std::min(it->second[i], std::max<int64_t>(0, OwnWork(*reports[i]) - OwnGain(f)));
    }
  }
  std::map<v1::Detector, int64_t> job_gain;
  for (const auto& [detector, own] : fixed_own) {
    int64_t after = uncaptured_peer ? slowest : 0;
    for (int64_t ns : own) after = std::max(after, ns);
    job_gain[detector] = std::max<int64_t>(0, slowest - after);
  }
  for (v1::StepReport* r : reports) {
    const int64_t wall = r->breakdown().wall_ns();
    for (v1::Finding& f : *r->mutable_findings()) {
      const int64_t own = OwnGain(f);
      const int64_t gain = job_gain[f.detector()];
      if (own == gain && f.lost_ns() == gain) continue;
      if (OwnGainNoted(f) == nullptr) {
        AddEvidence(&f, kThisRankAloneKey, Ns(own),
                    " saved on this rank alone; the job's step runs at its slowest rank's pace");
      }
      f.set_lost_ns(gain);
      f.set_severity(SeverityFor(wall > 0 ? static_cast<double>(gain) / wall : 0));
      if (f.has_what_if()) {
        const std::string fix = f.what_if().fix();
        SetWhatIf(&f, fix, wall, gain);
      }
    }
  }
}

}  // namespace gpuspy::analysis
