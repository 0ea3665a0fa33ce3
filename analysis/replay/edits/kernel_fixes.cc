// The fixes that change GPU work: fp32_gemm's (tensor cores), unfused_elementwise's (each chain
// of memory-bound kernels one memory pass) and unfused_attention's (the passes between the
// attention GEMMs go). The launches a fusion removes go too, with the host's per-op cost.
#include "analysis/attention_pattern.h"
#include "analysis/kernel_classes.h"
#include "analysis/kernel_classifier.h"
#include "analysis/kernel_composition.h"
#include "analysis/replay/edits/edits.h"

namespace gpuspy::analysis::replay {
namespace {

// The process's classification of the op's kernel (StepContext.classes: one per name).
KernelClass ClassOf(const StepContext& ctx, const GpuOp& op) {
  return ctx.classes.Of(ctx.strings, op.kernel->name);
}

bool IsUnfusedMemoryPass(const StepContext& ctx, const GpuOp& op) {
  return ClassOf(ctx, op) == KernelClass::kMemoryBound &&
         !IsAlreadyFusedKernel(ctx.strings.Get(op.kernel->name));
}

}  // namespace

std::optional<Fix> TensorCoreFix(const StepContext& ctx, const StepGraph& g) {
  Fix fix;
  fix.description = "FP32 GEMMs on tensor cores (TF32 or AMP), " +
                    std::to_string(static_cast<int>(kTensorCoreSpeedup)) + "x faster";
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const GpuOp& op = g.ops[i];
    if (op.carried() || op.kernel == nullptr || ClassOf(ctx, op) != KernelClass::kSimtFp32Gemm) continue;
    fix.edit.op_duration[static_cast<int>(i)] =
        static_cast<int64_t>(static_cast<double>(op.duration_ns()) / kTensorCoreSpeedup);
  }
  if (fix.edit.empty()) return std::nullopt;
  return fix;
}

std::optional<Fix> ElementwiseFusionFix(const StepContext& ctx, const StepGraph& g) {
  Fix fix;
  fix.description = "each chain of memory-bound kernels fused into one memory pass (torch.compile)";
  for (const std::vector<int>& stream : KernelsByStream(g)) {
    std::vector<StringRef> names;
    for (int op : stream) names.push_back(g.ops[op].kernel->name);
    const std::vector<bool> loop = LoopOverTensors(names);  // no chain links (kernel_composition.h)
    for (size_t i = 0; i < stream.size();) {
      if (!IsUnfusedMemoryPass(ctx, g.ops[stream[i]])) {
        ++i;
        continue;
      }
      std::vector<int> chain;
      int64_t chain_ns = 0;
      const size_t first = i;
      for (; i < stream.size() && IsUnfusedMemoryPass(ctx, g.ops[stream[i]]) &&
             (i == first || (!loop[first] && !loop[i]));
           ++i) {
        chain.push_back(stream[i]);
        chain_ns += g.ops[stream[i]].duration_ns();
      }
      if (chain.size() < 2) continue;
      fix.edit.op_duration[chain.front()] = chain_ns / static_cast<int64_t>(chain.size());
      for (size_t k = 1; k < chain.size(); ++k) fix.edit.op_duration[chain[k]] = 0;
      DropLaunches(g, chain, chain.front(), &fix.edit);
    }
  }
  if (fix.edit.empty()) return std::nullopt;
  return fix;
}

std::optional<Fix> AttentionFusionFix(const StepContext& ctx, const StepGraph& g) {
  Fix fix;
  fix.description = "fused attention (scaled_dot_product_attention / FlashAttention): the "
                    "passes over the scores between the GEMMs go";
  for (const std::vector<int>& stream : KernelsByStream(g)) {
    std::vector<KernelClass> cls;
    for (int op : stream) cls.push_back(ClassOf(ctx, g.ops[op]));
    for (size_t s = 0; s < stream.size(); ++s) {
      if (cls[s] != KernelClass::kMemoryBound ||
          !IsSoftmaxKernel(ctx.strings.Get(g.ops[stream[s]].kernel->name))) {
        continue;
      }
      // The GEMMs around the softmax, through at most kMaxKernelsBetweenAttentionParts memory-bound
      // kernels.
      auto find_gemm = [&](int dir) -> std::ptrdiff_t {
        std::ptrdiff_t i = static_cast<std::ptrdiff_t>(s) + dir;
        for (int n = 0; n <= kMaxKernelsBetweenAttentionParts && i >= 0 &&
                        i < static_cast<std::ptrdiff_t>(stream.size());
             ++n, i += dir) {
          if (IsGemmClass(cls[i])) return i;
          if (cls[i] != KernelClass::kMemoryBound) return -1;
        }
        return -1;
      };
      const std::ptrdiff_t before = find_gemm(-1), after = find_gemm(+1);
      if (before < 0 || after < 0) continue;
      std::vector<int> passes;
      for (std::ptrdiff_t k = before + 1; k < after; ++k) {
        passes.push_back(stream[k]);
        fix.edit.op_duration[stream[k]] = 0;
      }
      DropLaunches(g, passes, -1, &fix.edit);
    }
  }
  if (fix.edit.empty()) return std::nullopt;
  return fix;
}

}  // namespace gpuspy::analysis::replay
