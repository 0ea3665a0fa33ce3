// Unfused elementwise: the GPU is busy, but much of its time goes to chains of memory-bound
// kernels (eager-mode bias/GELU/dropout/add/LayerNorm after each GEMM), each reading and writing
// whole tensors. Faster kernels will not help (they run at memory bandwidth); fusing a chain into
// one pass will: torch.compile, fused LayerNorm/optimizer kernels, foreach.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "analysis/detectors/detectors.h"
#include "analysis/kernel_classifier.h"
#include "analysis/kernel_composition.h"

namespace gpuspy::analysis {
namespace {

// Memory-bound kernels' share of the step's kernel time (sum of durations). An eager
// transformer MLP is well above half; a GEMM-bound step with a bias/activation after each GEMM
// sits near a third (the `healthy` scenario: 36 %).
constexpr double kMinMemoryBoundShare = 0.45;
// The step is otherwise GPU-bound: compute keeps the GPU busy (an idle GPU has a host-side
// problem first: launch_storm, sync_stall, input_stall).
constexpr double kMinComputeBusyShare = 0.80;
// The estimated saving must be worth a change: ≥ 5 % of the step.
constexpr double kMinSavingShare = 0.05;
// Chains listed in the evidence.
constexpr size_t kListedChains = 3;

struct ChainStats {
  int64_t ns = 0;
  int64_t saving_ns = 0;
  uint64_t repeats = 0;
};

}  // namespace

std::optional<v1::Finding> DetectUnfusedElementwise(const StepContext& ctx) {
  const auto& b = ctx.breakdown;
  if (b.wall_ns() <= 0 || ctx.ShareOfWall(b.compute_busy_ns()) < kMinComputeBusyShare) {
    return std::nullopt;
  }
  std::vector<ClassifiedKernel> kernels = ctx.kernels;  // a copy: fused kernels are relabelled below
  // An already-fused kernel (a foreach/fused optimizer step) is memory-bound, but fusing it
  // again saves nothing: it counts as other work and ends a chain.
  for (ClassifiedKernel& k : kernels) {
    if (k.cls == KernelClass::kMemoryBound && IsAlreadyFusedKernel(ctx.strings.Get(k.name))) {
      k.cls = KernelClass::kOther;
    }
  }
  int64_t kernel_ns = 0, memory_ns = 0;
  uint64_t memory_count = 0;
  for (const ClassifiedKernel& k : kernels) {
    kernel_ns += k.duration_ns();
    if (k.cls == KernelClass::kMemoryBound) {
      memory_ns += k.duration_ns();
      ++memory_count;
    }
  }
  if (kernel_ns == 0 || static_cast<double>(memory_ns) / kernel_ns < kMinMemoryBoundShare) {
    return std::nullopt;
  }
  // Chains: maximal runs of consecutive memory-bound kernels in launch order; any other kernel
  // (a GEMM, a collective, a Triton kernel) ends one, and a loop of one op over many tensors
  // (LoopOverTensors) is no link of one: each of its kernels is a chain of its own. A fused chain
  // of L kernels reads its inputs and writes its output once instead of L times: saving ≈ chain
  // time × (1 − 1/L).
  std::vector<StringRef> names;
  for (const ClassifiedKernel& k : kernels) names.push_back(k.name);
  const std::vector<bool> loop = LoopOverTensors(names);
  std::map<std::string, ChainStats> chains;
  int64_t saving_ns = 0;
  for (size_t i = 0; i < kernels.size();) {
    if (kernels[i].cls != KernelClass::kMemoryBound) {
      ++i;
      continue;
    }
    size_t j = i;
    int64_t chain_ns = 0;
    std::string key;
    while (j < kernels.size() && kernels[j].cls == KernelClass::kMemoryBound && (j == i || (!loop[i] && !loop[j]))) {
      chain_ns += kernels[j].duration_ns();
      if (j > i) key += " → ";
      key += ShortKernelName(ctx.strings.Get(kernels[j].name));
      ++j;
    }
    const size_t length = j - i;
    const auto chain_saving = static_cast<int64_t>(chain_ns * (1.0 - 1.0 / length));
    saving_ns += chain_saving;
    if (length >= 2) {
      ChainStats& c = chains[key];
      c.ns += chain_ns;
      c.saving_ns += chain_saving;
      ++c.repeats;
    }
    i = j;
  }
  if (ctx.ShareOfWall(saving_ns) < kMinSavingShare) return std::nullopt;

  std::vector<std::pair<std::string, ChainStats>> ranked(chains.begin(), chains.end());
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.second.ns > y.second.ns; });
  const double share = static_cast<double>(memory_ns) / kernel_ns;
  v1::Finding f;
  f.set_detector(v1::unfused_elementwise);
  f.set_title("Memory-bound elementwise/norm kernels take " + FormatPercent(share) +
              " of GPU time (" + std::to_string(memory_count) +
              " kernels); fusing them would save an estimated " + FormatMs(saving_ns));
  f.set_lost_ns(saving_ns);
  f.set_severity(SeverityFor(ctx.ShareOfWall(saving_ns)));
  AddEvidence(&f, "memory_bound_time", Ns(memory_ns));
  AddEvidence(&f, "memory_bound_share_of_kernel_time", Fraction(share));
  AddEvidence(&f, "memory_bound_kernels", Count(memory_count));
  AddEvidence(&f, "estimated_saving", Ns(saving_ns),
              " (estimate: a fused chain of L kernels makes one memory pass instead of L)");
  for (size_t i = 0; i < ranked.size() && i < kListedChains; ++i) {
    AddEvidence(&f, "chain",
                ranked[i].first + " ×" + std::to_string(ranked[i].second.repeats) + " = ",
                Ns(ranked[i].second.ns));
  }
  f.set_fix_hint(
      "these kernels run at memory bandwidth: faster math or FP16 will not speed them up, fusion "
      "will. torch.compile(model) fuses such chains into one Triton kernel each; otherwise use "
      "fused kernels (apex/TE FusedLayerNorm, fused bias+GELU, torch.optim with fused=True or "
      "foreach=True)");
  return f;
}

}  // namespace gpuspy::analysis
