// GPU-bound (healthy): the GPU is busy nearly the whole step. Not a problem to fix on the host
// side; the lever is the kernels themselves, so the finding says what the GPU time is made of
// and points at the lever for its largest class. When fusion would help, unfused_elementwise /
// unfused_attention report it with lost time and outrank this finding (lost 0).
#include <string>
#include <vector>

#include "analysis/detectors/detectors.h"
#include "analysis/kernel_composition.h"

namespace gpuspy::analysis {
namespace {

constexpr double kMinGpuBusyShare = 0.90;
// Kernel classes named in the title's composition line.
constexpr size_t kNamedClasses = 3;

// The lever for the class that takes most of the GPU time.
std::string KernelClassHint(const std::string& top_class) {
  if (top_class == "gemm_tc") {
    return "tensor-core GEMMs lead: keep GEMM dimensions multiples of 64, use larger batches "
           "per GEMM, FP8 (Transformer Engine) on Hopper, or less math";
  }
  if (top_class == "elementwise") {
    return "memory-bound kernels lead: fuse them (torch.compile, fused LayerNorm/optimizer)";
  }
  if (top_class == "gemm_fp32") {
    return "FP32 GEMMs on CUDA cores lead: enable TF32 or AMP (bf16)";
  }
  if (top_class == "attention") {
    return "fused attention leads: it is already the fast path; shorter sequences or "
           "FlashAttention-3 on Hopper are the remaining levers";
  }
  if (top_class == "triton") {
    return "compiled (Triton) kernels lead: try torch.compile(mode=\"max-autotune\")";
  }
  return "look at the top kernels";
}

}  // namespace

std::optional<v1::Finding> DetectGpuBound(const StepContext& ctx) {
  const auto& b = ctx.breakdown;
  // compute_busy_ns counts copies and memsets as busy (the GPU is not idle during them), but a
  // step that spends its time copying is copy-bound, not GPU-bound: the verdict counts compute
  // kernels only. Time in NCCL kernels alone is waiting for other ranks, not computing.
  if (b.wall_ns() <= 0 || ctx.ShareOfWall(b.compute_busy_ns()) < kMinGpuBusyShare) {
    return std::nullopt;
  }
  const std::vector<ClassifiedKernel>& kernels = ctx.kernels;
  std::vector<Interval> computing;
  for (const ClassifiedKernel& k : kernels) {
    if (k.cls != KernelClass::kCommunication) computing.push_back({k.start_ns, k.end_ns});
  }
  const int64_t kernel_ns = IntervalSet::Union(std::move(computing)).TotalLength();
  if (ctx.ShareOfWall(kernel_ns) < kMinGpuBusyShare) return std::nullopt;
  const std::vector<v1::KernelClassTime> classes = KernelComposition(kernels);
  v1::Finding f;
  f.set_detector(v1::gpu_bound);
  // The renderers put "gpu_bound: " before the title; the title does not repeat it.
  f.set_title("the GPU runs compute kernels " + FormatPercent(ctx.ShareOfWall(kernel_ns)) +
              " of the step");
  f.set_lost_ns(0);
  f.set_severity(v1::info);
  AddEvidence(&f, "compute_kernels", Ns(kernel_ns));
  AddEvidence(&f, "compute_busy", Ns(b.compute_busy_ns()), " (with copies and memsets)");
  if (b.communication_ns() > 0) AddEvidence(&f, "communication", Ns(b.communication_ns()));
  AddEvidence(&f, "kernels", Count(b.kernel_count()));
  if (!classes.empty()) AddEvidence(&f, "gpu_time", CompositionLine(classes, kNamedClasses));
  f.set_fix_hint("the host keeps the GPU fed; speed up the kernels themselves. " +
                 KernelClassHint(classes.empty() ? "" : classes.front().kernel_class()));
  return f;
}

}  // namespace gpuspy::analysis
