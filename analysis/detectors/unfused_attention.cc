// Unfused attention: attention computed op by op (bmm → mask/scale → softmax → dropout → bmm,
// every layer) instead of one fused kernel. Each op between the two batched GEMMs writes and
// reads the full seq×seq score matrix; flash/mem-efficient attention keeps it on chip.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "analysis/attention_pattern.h"
#include "analysis/detectors/detectors.h"
#include "analysis/kernel_composition.h"

namespace gpuspy::analysis {
namespace {

// The pattern repeats per layer: a single softmax between GEMMs can be a classifier head.
constexpr int kMinPatternRepeats = 2;
// The patterns' time (first GEMM to last GEMM) must be a visible part of the step.
constexpr double kMinPatternShare = 0.10;

// The index of the GEMM at most kMaxKernelsBetweenAttentionParts memory-bound kernels from
// `from` in direction `step` (−1 or +1), or -1.
int FindGemm(const std::vector<ClassifiedKernel>& k, int from, int step) {
  for (int n = 1, i = from + step;
       n <= kMaxKernelsBetweenAttentionParts + 1 && i >= 0 && i < static_cast<int>(k.size());
       ++n, i += step) {
    if (IsGemmClass(k[i].cls)) return i;
    if (k[i].cls != KernelClass::kMemoryBound) return -1;
  }
  return -1;
}

}  // namespace

std::optional<v1::Finding> DetectUnfusedAttention(const StepContext& ctx) {
  std::vector<ClassifiedKernel> kernels;
  for (const ClassifiedKernel& k : ctx.kernels) {
    // A step that already runs fused attention is not unfused (a softmax elsewhere is).
    if (k.cls == KernelClass::kFusedAttention) return std::nullopt;
    // Collectives run on their own stream; they do not split a pattern on the compute stream.
    if (k.cls != KernelClass::kCommunication) kernels.push_back(k);
  }
  int repeats = 0;
  int64_t pattern_ns = 0, between_ns = 0;
  std::map<std::string, int> shapes;  // the pattern's kernel sequence, short names
  for (int i = 0; i < static_cast<int>(kernels.size()); ++i) {
    if (kernels[i].cls != KernelClass::kMemoryBound ||
        !IsSoftmaxKernel(ctx.strings.Get(kernels[i].name))) {
      continue;
    }
    const int before = FindGemm(kernels, i, -1);
    const int after = FindGemm(kernels, i, +1);
    if (before < 0 || after < 0) continue;
    ++repeats;
    std::string shape;
    for (int j = before; j <= after; ++j) {
      pattern_ns += kernels[j].duration_ns();
      if (j != before && j != after) between_ns += kernels[j].duration_ns();
      if (j > before) shape += " → ";
      shape += IsGemmClass(kernels[j].cls) ? std::string("gemm")
                                           : ShortKernelName(ctx.strings.Get(kernels[j].name));
    }
    ++shapes[shape];
    i = after - 1;  // the closing GEMM may open the next pattern (backward)
  }
  if (repeats < kMinPatternRepeats || ctx.ShareOfWall(pattern_ns) < kMinPatternShare) {
    return std::nullopt;
  }
  const auto top = std::max_element(shapes.begin(), shapes.end(),
                                     [](const auto& x, const auto& y) { return x.second < y.second; });
  v1::Finding f;
  f.set_detector(v1::unfused_attention);
  f.set_title("Attention runs unfused (GEMM → softmax → GEMM, " + std::to_string(repeats) +
              "× in the step, " + FormatMs(pattern_ns) + "); no fused attention kernel");
  // An estimate: a fused kernel keeps the scores on chip, so the memory-bound passes between
  // the GEMMs (mask, softmax, dropout over seq×seq) go away; the GEMMs' math stays.
  f.set_lost_ns(between_ns);
  f.set_severity(SeverityFor(ctx.ShareOfWall(between_ns)));
  AddEvidence(&f, "pattern", top->first + " ×" + std::to_string(top->second));
  AddEvidence(&f, "patterns_in_step", Count(repeats));
  AddEvidence(&f, "pattern_time", Ns(pattern_ns));
  AddEvidence(&f, "per_pattern", Ns(pattern_ns / repeats));
  AddEvidence(&f, "between_gemms_time", Ns(between_ns),
              " (estimated saving: fused attention does not write the score matrix out)");
  f.set_fix_hint(
      "use torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=..., "
      "dropout_p=..., is_causal=...) instead of matmul → masked_fill → softmax → dropout → "
      "matmul: it dispatches to flash / memory-efficient attention kernels (fp16/bf16 for flash)");
  return f;
}

}  // namespace gpuspy::analysis
