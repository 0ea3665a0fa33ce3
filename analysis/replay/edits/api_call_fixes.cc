// alloc_churn's and cuda_api_bound's fixes: the calls cost what a cached allocation costs (the
// caching allocator reuses its blocks; the driver's per-step work moves out of the loop), and
// frees no longer synchronize the device. The driver fix leaves allocator calls to alloc_churn.
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
  fix.description = "allocations served from the caching allocator's blocks (no cudaMalloc/cudaFree)";
  CheapenCalls(g, [&](const HostCall& c) {
    const std::string_view name = ctx.strings.Get(c.api->name);
    const int64_t duration = c.duration_ns();
    // Start-up work (a context created inside the first cudaFree) is not churn.
    return IsDeviceAllocatorApi(name) && !IsStartup(DriverWorkOf(name, duration), duration);
  }, &fix.edit);
  if (fix.edit.empty()) return std::nullopt;
  return fix;
}

std::optional<Fix> DriverCallFix(const StepContext& ctx, const StepGraph& g) {
  Fix fix;
  fix.description = "the driver's work in these calls moved out of the step";
  for (const DriverCall& d : ctx.idle.driver_calls) {
    // Allocation is alloc_churn's fix (one cost, one finding: merge_findings.cc).
    if (IsDeviceAllocatorApi(ctx.strings.Get(d.api->name))) continue;
    auto it = g.call_of.find(d.api);
    if (it == g.call_of.end()) continue;
    const HostCall& call = g.threads[it->second.first].calls[it->second.second];
    fix.edit.call_cost[it->second] = std::min(call.duration_ns(), kCheapCallNs);
  }
  if (fix.edit.empty()) return std::nullopt;
  return fix;
}

}  // namespace gpuspy::analysis::replay
