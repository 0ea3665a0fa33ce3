// copy_dominated's fix: large host<->device copies from pinned memory (at the run's measured
// pinned bandwidth), non_blocking, on a side stream that nothing in the step waits for (the next
// batch prefetched while this one computes). The partial fix pins them and nothing else: still
// synchronous, still in stream order.
#include <algorithm>

#include "analysis/blocking_calls.h"
#include "analysis/replay/edits/edits.h"

namespace gpuspy::analysis::replay {
namespace {

bool IsPinned(const MemcpyEvent& m) {
  return m.src_kind == MemoryKind::kPinned || m.dst_kind == MemoryKind::kPinned;
}

bool IsHostDeviceCopy(const MemcpyEvent& m) {
  return m.copy_kind == CopyKind::kHtoD || m.copy_kind == CopyKind::kDtoH;
}

// Bytes per ns of the run's large pinned copies (the median), or the default.
double PinnedBytesPerNs(const StepContext& ctx) {
  std::vector<double> rates;
  for (const MemcpyEvent& m : ctx.events.memcpys) {
    if (IsPinned(m) && IsHostDeviceCopy(m) && m.bytes >= kMinMeasuredCopyBytes && m.end_ns > m.start_ns) {
      rates.push_back(static_cast<double>(m.bytes) / static_cast<double>(m.end_ns - m.start_ns));
    }
  }
  if (rates.empty()) return kDefaultPinnedBytesPerNs;
  std::nth_element(rates.begin(), rates.begin() + static_cast<std::ptrdiff_t>(rates.size() / 2), rates.end());
  return rates[rates.size() / 2];
}

// The large host<->device copies launched from the step.
std::vector<int> LargeCopies(const StepGraph& g) {
  std::vector<int> out;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const GpuOp& op = g.ops[i];
    if (!op.carried() && op.memcpy != nullptr && IsHostDeviceCopy(*op.memcpy) &&
        op.memcpy->bytes >= kMinEditedCopyBytes) {
      out.push_back(static_cast<int>(i));
    }
  }
  return out;
}

// Pageable copies at pinned speed (never slower than recorded).
void Pin(const StepContext& ctx, const StepGraph& g, const std::vector<int>& copies, StepEdit* edit) {
  const double rate = PinnedBytesPerNs(ctx);
  for (int i : copies) {
    const GpuOp& op = g.ops[i];
    if (!IsPageableCopy(*op.memcpy)) continue;
    const auto pinned = static_cast<int64_t>(static_cast<double>(op.memcpy->bytes) / rate);
    if (pinned < op.duration_ns()) edit->op_duration[i] = pinned;
  }
}

}  // namespace

std::optional<Fix> CopyFix(const StepContext& ctx, const StepGraph& g) {
  const std::vector<int> copies = LargeCopies(g);
  if (copies.empty()) return std::nullopt;
  Fix fix;
  fix.description =
      "copies from pinned memory, non_blocking, on a side stream overlapped with compute";
  Pin(ctx, g, copies, &fix.edit);
  for (int i : copies) {
    fix.edit.detached_ops.insert(i);
    const auto [t, c] = LaunchOf(g, i);
    fix.edit.call_cost[{t, c}] = std::min(g.threads[t].calls[c].duration_ns(), kCheapCallNs);
  }
  return fix;
}

std::optional<Fix> PinnedCopyFix(const StepContext& ctx, const StepGraph& g) {
  Fix fix;
  fix.description = "pinned memory only (copies still synchronous, in stream order)";
  Pin(ctx, g, LargeCopies(g), &fix.edit);
  if (fix.edit.empty()) return std::nullopt;
  return fix;
}

}  // namespace gpuspy::analysis::replay
