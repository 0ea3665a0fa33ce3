// sync_stall's fix: the step's blocking calls return at once (values read every N steps, no
// torch.cuda.synchronize() in the loop), so the host keeps the launch queue full.
#include "analysis/replay/edits/edits.h"

namespace gpuspy::analysis::replay {
namespace {

uint64_t CopiedBytes(const StepGraph& g, const HostCall& call) {
  uint64_t bytes = 0;
  for (int op : call.launches) {
    if (g.ops[op].memcpy != nullptr) bytes += g.ops[op].memcpy->bytes;
  }
  return bytes;
}

}  // namespace

std::optional<Fix> SyncFix(const StepContext& /*ctx*/, const StepGraph& g) {
  Fix fix;
  fix.description = "the blocking calls (.item(), .cpu(), synchronize) return at once";
  for (size_t t = 0; t < g.threads.size(); ++t) {
    const std::vector<HostCall>& calls = g.threads[t].calls;
    for (size_t c = 0; c < calls.size(); ++c) {
      const HostCall& call = calls[c];
      // Allocator calls are alloc_churn's fix, large copies copy_dominated's.
      if (!call.blocking || call.allocator || CopiedBytes(g, call) >= kMinEditedCopyBytes) continue;
      fix.edit.call_cost[{static_cast<int>(t), static_cast<int>(c)}] =
          std::min(call.duration_ns(), kBlockingCallFloorNs);
    }
  }
  if (fix.edit.empty()) return std::nullopt;
  return fix;
}

}  // namespace gpuspy::analysis::replay
