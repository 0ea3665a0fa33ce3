#include "analysis/replay/what_if.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "analysis/evidence.h"
#include "analysis/replay/edits/edits.h"
#include "analysis/replay/replay.h"
#include "analysis/replay/step_graph.h"

namespace gpuspy::analysis::replay {
namespace {

void SetWhatIf(const Fix& fix, const ReplayResult& base, const ReplayResult& edited,
               v1::WhatIf* out) {
  out->set_fix(fix.description);
  out->set_step_ns(edited.step_ns);
  out->set_gain_ns(std::max<int64_t>(0, base.step_ns - edited.step_ns));
}

// Whether the unedited replay reproduces the step; the reason when not.
bool Reproduces(const StepGraph& g, const ReplayResult& base, int64_t wall, std::string* why) {
  if (g.host_calls() == 0) {
    *why = "no CUDA calls recorded in the step: its GPU work cannot be tied to the host";
    return false;
  }
  if (!base.ok) {
    *why = base.error;
    return false;
  }
  if (static_cast<double>(std::llabs(base.step_ns - wall)) > kMaxReplayError * static_cast<double>(wall)) {
    *why = absl::StrCat("the unedited replay gives ", FormatMs(base.step_ns), " for a ",
                        FormatMs(wall), " step");
    return false;
  }
  return true;
}

}  // namespace

void ApplyWhatIfs(const StepContext& ctx, std::vector<v1::Finding>* findings, v1::StepReplay* out) {
  const int64_t wall = ctx.window().length();
  out->set_recorded_ns(wall);
  if (wall <= 0) {
    out->set_unavailable_reason("the step has no length");
    return;
  }
  const StepGraph g = BuildStepGraph(ctx.events, ctx.strings, ctx.window());
  out->set_host_calls(g.host_calls());
  out->set_gpu_ops(g.launched_ops());
  out->set_carried_events(g.carried_events);
  const ReplayResult base = Replay(g);
  if (base.ok) out->set_replayed_ns(base.step_ns);
  std::string why;
  if (!Reproduces(g, base, wall, &why)) {
    out->set_unavailable_reason(why);
    return;
  }
  out->set_available(true);
  StepEdit all;
  for (v1::Finding& f : *findings) {
    const std::optional<Fix> fix = FixFor(f.detector(), ctx, g);
    if (!fix) continue;
    const ReplayResult edited = Replay(g, fix->edit);
    if (!edited.ok) continue;
    SetWhatIf(*fix, base, edited, f.mutable_what_if());
    f.set_lost_ns(f.what_if().gain_ns());
    f.set_severity(SeverityName(SeverityFor(ctx.ShareOfWall(f.lost_ns()))));
    for (const Fix& partial : PartialFixesFor(f.detector(), ctx, g)) {
      const ReplayResult r = Replay(g, partial.edit);
      if (r.ok) SetWhatIf(partial, base, r, f.add_partial_fixes());
    }
    all.Merge(fix->edit);
  }
  const ReplayResult together = all.empty() ? base : Replay(g, all);
  const int64_t all_ns = together.ok ? together.step_ns : base.step_ns;
  out->set_all_fixes_ns(all_ns);
  out->set_all_fixes_gain_ns(std::max<int64_t>(0, base.step_ns - all_ns));
}

}  // namespace gpuspy::analysis::replay
