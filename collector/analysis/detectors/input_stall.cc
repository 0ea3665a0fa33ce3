// Input / data-loader stall: the GPU sits idle while the host does no CUDA work at all (it is in
// Python, the data loader, or I/O) — typically at the start of each step, waiting for a batch.
#include <algorithm>
#include <vector>

#include "collector/analysis/detectors/detectors.h"

namespace gpuspy::analysis {
namespace {

constexpr double kMinHostOtherIdleShare = 0.20;  // GPU idle with no CUDA call on the host
constexpr double kMinLeadingGapShare = 0.10;     // of which at the step's start

}  // namespace

std::optional<v1::Finding> DetectInputStall(const StepContext& ctx) {
  const auto& b = ctx.breakdown;
  if (ctx.ShareOfWall(b.idle_host_other_ns()) < kMinHostOtherIdleShare) return std::nullopt;
  // First sign of CUDA work in the step: an API call or GPU activity.
  int64_t first = ctx.step.end_ns;
  for (const auto& a : ctx.events.apis) {
    if (ctx.InWindow(a.start_ns, a.end_ns)) first = std::min(first, std::max(a.start_ns, ctx.step.start_ns));
  }
  for (const auto& k : ctx.events.kernels) {
    if (ctx.InWindow(k.start_ns, k.end_ns)) first = std::min(first, std::max(k.start_ns, ctx.step.start_ns));
  }
  for (const auto& m : ctx.events.memcpys) {
    if (ctx.InWindow(m.start_ns, m.end_ns)) first = std::min(first, std::max(m.start_ns, ctx.step.start_ns));
  }
  const int64_t leading = first - ctx.step.start_ns;
  if (ctx.ShareOfWall(leading) < kMinLeadingGapShare) return std::nullopt;

  v1::Finding f;
  f.set_detector("input_stall");
  f.set_title("GPU idle " + FormatMs(b.idle_host_other_ns()) +
              " while the host does no CUDA work (waiting for input: " + FormatMs(leading) +
              " before the step's first CUDA call)");
  f.set_lost_ns(b.idle_host_other_ns());
  f.set_severity(SeverityFor(ctx.ShareOfWall(b.idle_host_other_ns())));
  AddEvidence(&f, "idle_without_cuda_work", FormatMs(b.idle_host_other_ns()) + " (" +
                                                FormatPercent(ctx.ShareOfWall(b.idle_host_other_ns())) +
                                                " of step)");
  AddEvidence(&f, "leading_gap", FormatMs(leading));
  f.set_fix_hint(
      "the input pipeline does not keep up: raise DataLoader num_workers, set pin_memory=True, "
      "persistent_workers=True and prefetch_factor, move decoding/augmentation to the GPU, or "
      "cache preprocessed data");
  return f;
}

}  // namespace gpuspy::analysis
