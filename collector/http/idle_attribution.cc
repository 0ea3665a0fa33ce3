#include "collector/http/idle_attribution.h"

#include "collector/analysis/api_classifier.h"
#include "collector/analysis/step_report.h"

namespace gpuspy::collector {

using analysis::Interval;
using analysis::IntervalSet;

IdleAttribution AttributeIdle(const EventColumns& ev, const StringTable& strings, Interval w) {
  std::vector<Interval> busy, sync, launches;
  for (const auto& k : ev.kernels) busy.push_back({k.start_ns, k.end_ns});
  for (const auto& g : ev.graph_launches) busy.push_back({g.start_ns, g.end_ns});
  for (const auto& m : ev.memcpys) busy.push_back({m.start_ns, m.end_ns});
  for (const auto& m : ev.memsets) busy.push_back({m.start_ns, m.end_ns});
  for (const auto& a : ev.apis) {
    if (analysis::IsLaunchApi(strings.Get(a.name))) launches.push_back({a.start_ns, a.end_ns});
  }
  IdleAttribution out;
  out.blocking_calls = analysis::FindBlockingCalls(ev, strings, w);
  for (const auto& c : out.blocking_calls) sync.push_back(c.span);

  // The rule of BuildStepReport (collector/analysis/step_report.cc), step for step.
  const IntervalSet idle = IntervalSet::Union(std::move(busy)).Clip(w).GapsWithin(w);
  const IntervalSet sync_set = IntervalSet::Union(std::move(sync)).Clip(w);
  const IntervalSet launch_set = IntervalSet::Union(std::move(launches)).Clip(w);
  const IntervalSet rest = idle.Subtract(sync_set);
  std::vector<Interval> launch_bound = rest.Intersect(launch_set).intervals();
  for (const Interval& g : rest.intervals()) {
    if (g.length() < analysis::kLaunchGapNs && g.start_ns > w.start_ns && g.end_ns < w.end_ns) {
      launch_bound.push_back(g);
    }
  }
  out.sync_blocked = idle.Intersect(sync_set);
  out.launch_bound = IntervalSet::Union(std::move(launch_bound));
  out.host_other = rest.Subtract(out.launch_bound);
  return out;
}

}  // namespace gpuspy::collector
