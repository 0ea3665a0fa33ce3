// alloc_churn's and cuda_api_bound's fixes: the calls cost what a cached allocation costs (the
// caching allocator reuses its blocks; the driver's per-step work moves out of the loop), and
// frees no longer synchronize the device: neither does the sync empty_cache() does before them,
// and the allocator's bookkeeping between its calls goes too. The driver fix leaves allocator
// calls to alloc_churn.
#include "analysis/api_classifier.h"
#include "analysis/idle_attribution.h"
#include "analysis/replay/edits/edits.h"

namespace gpuspy::analysis::replay {
namespace {

template <typename Pick>
void CheapenCalls(const StepGraph& g, Pick pick, StepEdit* edit) {
  for (size_t t = 0; t < g.threads.size(); ++t) {
    const std::vector<HostCall>& calls = g.threads[t].calls;
    for (size_t c = 0; c < calls.size(); ++c) {
      if (!pick(calls[c])) continue;
      edit->call_cost[{static_cast<int>(t), static_cast<int>(c)}] =
          std::min(calls[c].duration_ns(), kCheapCallNs);
    }
  }
}

}  // namespace

std::optional<Fix> AllocatorFix(const StepContext& ctx, const StepGraph& g) {
  Fix fix;
  fix.description = "allocations served from the caching allocator's blocks (no empty_cache(), "
                    "no cudaMalloc/cudaFree)";
  const auto churn = [&](const HostCall& c) {
    const std::string_view name = ctx.strings.Get(c.api->name);
    // The sync that empty_cache() does before its frees (blocking_calls.h) goes with them.
    if (!IsDeviceAllocatorApi(name)) return c.allocator;
    // Start-up work (a context created inside the first cudaFree) is not churn.
    const int64_t duration = c.duration_ns();
    return !IsStartup(DriverWorkOf(name, duration), duration);
  };
  CheapenCalls(g, churn, &fix.edit);
  // The allocator's bookkeeping between two of its calls goes with them; the host work before
  // the first of a run (the op that needed the memory) stays.
  StepEdit bookkeeping;
  for (const HostThread& thread : g.threads) {
    std::vector<Interval> gaps;
    for (size_t c = 1; c < thread.calls.size(); ++c) {
      const HostCall& before = thread.calls[c - 1];
      const HostCall& call = thread.calls[c];
      const int64_t gap = call.start_ns - before.end_ns;
      if (gap > 0 && gap <= kMaxAllocatorBookkeepingNs && churn(before) && churn(call)) {
        gaps.push_back({before.end_ns, call.start_ns});
      }
    }
    if (!gaps.empty()) bookkeeping.removed_host[thread.thread_id] = IntervalSet::Union(std::move(gaps));
  }
  fix.edit.Merge(bookkeeping);
  if (fix.edit.empty()) return std::nullopt;
  return fix;
}

std::optional<Fix> DriverCallFix(const StepContext& ctx, const StepGraph& g) {
  Fix fix;
  fix.description = "the driver's work in these calls moved out of the step";
  for (const DriverCall& d : ctx.idle.driver_calls) {
    // Allocation is alloc_churn's fix (one cost, one finding: merge_findings.cc).
    if (IsDeviceAllocatorApi(ctx.strings.Get(d.api->name))) continue;
    const std::optional<std::pair<int, int>> ref = g.CallOf(d.api);
    if (!ref) continue;
    const HostCall& call = g.threads[ref->first].calls[ref->second];
    fix.edit.call_cost[*ref] = std::min(call.duration_ns(), kCheapCallNs);
  }
  if (fix.edit.empty()) return std::nullopt;
  return fix;
}

}  // namespace gpuspy::analysis::replay
