// GPU-bound (healthy): the GPU is busy nearly the whole step. Not a problem to fix on the host
// side; the lever is the kernels themselves.
#include "collector/analysis/detectors/detectors.h"

namespace gpuspy::analysis {
namespace {

constexpr double kMinGpuBusyShare = 0.90;

}  // namespace

std::optional<v1::Finding> DetectGpuBound(const StepContext& ctx) {
  const auto& b = ctx.breakdown;
  // Time in NCCL kernels alone is waiting for other ranks, not computing.
  if (b.wall_ns() <= 0 || ctx.ShareOfWall(b.compute_busy_ns()) < kMinGpuBusyShare) {
    return std::nullopt;
  }
  v1::Finding f;
  f.set_detector("gpu_bound");
  f.set_title("GPU-bound: the GPU computes " + FormatPercent(ctx.ShareOfWall(b.compute_busy_ns())) +
              " of the step");
  f.set_lost_ns(0);
  f.set_severity("info");
  AddEvidence(&f, "compute_busy", FormatMs(b.compute_busy_ns()));
  if (b.communication_ns() > 0) AddEvidence(&f, "communication", FormatMs(b.communication_ns()));
  AddEvidence(&f, "kernels", std::to_string(b.kernel_count()));
  f.set_fix_hint(
      "the host keeps the GPU fed; speed up the kernels themselves: AMP/bf16, torch.compile, "
      "fused attention (scaled_dot_product_attention), and look at the top kernels");
  return f;
}

}  // namespace gpuspy::analysis
