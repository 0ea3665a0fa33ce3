// host_bound's and input_stall's fixes: host work that costs nothing. host_bound names the host
// range that owned the host's time while the GPU waited (moving metrics out of the loop makes it
// free); input_stall's data loading is hidden behind the previous step (prefetching workers).
#include "analysis/host_activity.h"
#include "analysis/idle_attribution.h"
#include "analysis/replay/edits/edits.h"

namespace gpuspy::analysis::replay {
namespace {

void RemoveOn(uint32_t thread_id, const IntervalSet& time, StepEdit* edit) {
  if (time.empty()) return;
  StepEdit one;
  one.removed_host[thread_id] = time;
  edit->Merge(one);
}

uint32_t MainThreadId(const StepGraph& g) {
  return g.main_thread >= 0 ? g.threads[g.main_thread].thread_id : 0;
}

// The ranges named `pick` on each thread, clipped to the window.
template <typename Pick>
void RemoveRanges(const StepContext& ctx, Pick pick, StepEdit* edit) {
  std::map<uint32_t, std::vector<Interval>> by_thread;
  for (const NvtxRangeEvent& r : ctx.events.nvtx_ranges) {
    if (!ctx.InWindow(r.start_ns, r.end_ns) || !IsActivityRange(r, ctx.strings, ctx.window())) continue;
    if (!pick(ctx.strings.Get(r.message))) continue;
    by_thread[r.thread_id].push_back({r.start_ns, r.end_ns});
  }
  for (auto& [tid, spans] : by_thread) {
    RemoveOn(tid, IntervalSet::Union(std::move(spans)).Clip(ctx.window()), edit);
  }
}

}  // namespace

std::optional<Fix> HostWorkFix(const StepContext& ctx, const StepGraph& g) {
  if (ctx.idle.host_other.empty() || g.main_thread < 0) return std::nullopt;
  Fix fix;
  const std::vector<HostActivity> doing =
      ctx.host_activity().During(ctx.idle.host_other, 1);
  if (!doing.empty()) {
    const std::string name = doing.front().name;
    fix.description = "the host work in " + name + " costs nothing (moved out of the loop)";
    RemoveRanges(ctx, [&](std::string_view n) { return n == name; }, &fix.edit);
  } else {
    fix.description = "the host work the GPU waited for costs nothing";
    RemoveOn(MainThreadId(g), ctx.idle.host_other, &fix.edit);
  }
  if (fix.edit.empty()) return std::nullopt;
  return fix;
}

std::optional<Fix> InputFix(const StepContext& ctx, const StepGraph& g) {
  Fix fix;
  fix.description = "data loading is hidden behind the previous step (prefetching workers)";
  RemoveRanges(ctx, [](std::string_view n) { return IsInputRange(n); }, &fix.edit);
  // Waiting for the batch before the first CUDA call, with no range naming it.
  if (g.main_thread >= 0) RemoveOn(MainThreadId(g), ctx.idle.input, &fix.edit);
  if (fix.edit.empty()) return std::nullopt;
  return fix;
}

}  // namespace gpuspy::analysis::replay
