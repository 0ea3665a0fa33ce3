#include "analysis/replay/what_if.h"

#include <cstdlib>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/evidence.h"
#include "analysis/step_source.h"
#include "analysis/replay/edits/edits.h"
#include "analysis/replay/replay.h"
#include "analysis/replay/step_graph.h"

namespace gpuspy::analysis::replay {
namespace {

double Share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

void SetWhatIf(const Fix& fix, const ReplayResult& base, const ReplayResult& edited,
               v1::WhatIf* out) {
  out->set_fix(fix.description);
  out->set_step_ns(edited.step_ns);
  out->set_gain_ns(std::max<int64_t>(0, base.step_ns - edited.step_ns));
  out->set_gain_fraction(Share(out->gain_ns(), base.step_ns));
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
  if (ctx.window().length() <= 0) {
    out->set_unavailable_reason("the step has no length");
    return;
  }
  if (IsTimeWindow(ctx.step.source)) {
    // A stretch of time cut by the clock, not an iteration: there is no step to replay.
    out->set_recorded_ns(ctx.window().length());
    out->set_unavailable_reason("a time window is no iteration of the program");
    return;
  }
  // A step found by its kernels' period is cut at the host's launch of the period's first kernel
  // (period_detector.cc): a point of the host's loop, replayed like an NVTX step.
  const Interval window = ctx.window();
  const int64_t wall = window.length();
  out->set_recorded_ns(wall);
  StepGraph g = BuildStepGraph(ctx.events, ctx.strings, window, ctx.idle.blocking_calls);
  // The last step found by its kernels' period is cut at its last GPU work, not at a point of
  // the host's loop (period_detector.h): the host's time after its last call there is the end of
  // the recording. Kept as host work, it froze the step at its recorded length whatever the GPU
  // gained (ResNet-50's last step: TF32 "saved 0 ms" where the steps before saved 4-7 ms).
  g.host_tail_unrecorded = PeriodKernels(ctx.step.source) > 0 && g.gpu_end_ns == window.end_ns &&
                           g.launched_ops() > 0;
  out->set_host_calls(g.host_calls());
  out->set_gpu_ops(g.launched_ops());
  out->set_carried_events(g.carried_events);
  // A self-contained step (nothing carried in from the step before, nothing of its own running
  // past its end) is one period of its loop already: replayed alone. Otherwise the steady model
  // when it reproduces the step, else the window alone.
  const bool self_contained = g.carried_events == 0 && g.gpu_spill_ns <= 0;
  int copies = self_contained ? 1 : kSteadyCopies;
  ReplayResult base = Replay(g, {}, copies);
  std::string why;
  if (copies > 1 && !Reproduces(g, base, wall, &why)) {
    copies = 1;
    base = Replay(g, {}, copies);
  }
  if (base.ok) out->set_replayed_ns(base.step_ns);
  if (!Reproduces(g, base, wall, &why)) {
    out->set_unavailable_reason(why);
    return;
  }
  out->set_available(true);
  out->set_model(copies > 1 ? "steady" : self_contained ? "self-contained" : "window");
  // A self-contained step stays one only while the edit keeps it so: a fix that removes the
  // step's sync lets its GPU work run past the host's step end, into the next step, whose host
  // work (input, Python before the first launch) then overlaps it. Such an edit is replayed as
  // one period of the steady loop, against the unedited loop replayed the same way.
  std::optional<ReplayResult> steady_base;
  const auto replay_edit = [&](const StepEdit& edit) -> std::pair<ReplayResult, const ReplayResult*> {
    ReplayResult edited = Replay(g, edit, copies);
    if (!self_contained || !edited.ok || edited.gpu_end_ns <= edited.host_end_ns) return {edited, &base};
    if (!steady_base) {
      steady_base = Replay(g, {}, kSteadyCopies);
      std::string steady_why;
      if (!Reproduces(g, *steady_base, wall, &steady_why)) steady_base->ok = false;
    }
    if (!steady_base->ok) return {edited, &base};
    return {Replay(g, edit, kSteadyCopies), &*steady_base};
  };
  StepEdit all;
  int fixes = 0;
  int64_t best_gain_ns = 0;
  for (v1::Finding& f : *findings) {
    const std::optional<Fix> fix = FixFor(f.detector(), ctx, g);
    if (!fix) continue;
    const auto [edited, against] = replay_edit(fix->edit);
    if (!edited.ok) continue;
    SetWhatIf(*fix, *against, edited, f.mutable_what_if());
    best_gain_ns = std::max(best_gain_ns, f.what_if().gain_ns());
    f.set_lost_ns(f.what_if().gain_ns());
    f.set_severity(SeverityFor(ctx.ShareOfWall(f.lost_ns())));
    for (const Fix& partial : PartialFixesFor(f.detector(), ctx, g)) {
      const auto [r, partial_against] = replay_edit(partial.edit);
      if (r.ok) SetWhatIf(partial, *partial_against, r, f.add_partial_fixes());
    }
    all.Merge(fix->edit);
    ++fixes;
  }
  // One fix: all fixes together is that one (no second replay). Every fix at once saves at least
  // what the best one saves alone (the replay keeps recorded slack per constraint, so composed
  // edits can bind differently by a few microseconds).
  int64_t all_gain_ns = best_gain_ns;
  if (fixes > 1) {
    const auto [together, against] = replay_edit(all);
    if (together.ok) all_gain_ns = std::max(all_gain_ns, against->step_ns - together.step_ns);
  }
  out->set_all_fixes_ns(base.step_ns - all_gain_ns);
  out->set_all_fixes_gain_ns(all_gain_ns);
  out->set_all_fixes_gain_fraction(Share(out->all_fixes_gain_ns(), base.step_ns));
}

}  // namespace gpuspy::analysis::replay
