// launch_storm's fix: runs of tiny kernels become one fused launch each (torch.compile, a
// foreach/fused optimizer, CUDA graphs): the launches and the host's per-op cost go, and the
// fused kernel does the kernels' work less their fixed costs (kKernelFixedCostNs once).
//
// A run is the kernels a loop over tensors launched back to back: tiny ones, and the same op over
// a larger tensor (a per-parameter loop's norm of a weight matrix between the norms of biases and
// LayerNorm parameters). A multi-tensor launch takes tensors of any size, so the larger ones lose
// their launches too, and keep their memory traffic. Only memory-bound ops join that way; a GEMM
// or a collective ends the run.
#include "absl/container/flat_hash_set.h"
#include "analysis/detectors/detectors.h"
#include "analysis/kernel_classes.h"
#include "analysis/replay/edits/edits.h"

namespace gpuspy::analysis::replay {

std::optional<Fix> LaunchStormFix(const StepContext& ctx, const StepGraph& g) {
  Fix fix;
  fix.description = "the tiny kernels fused into one launch per " +
                    std::to_string(kKernelsPerFusedLaunch) + " (torch.compile, foreach, CUDA graphs)";
  for (const std::vector<int>& stream : KernelsByStream(g)) {
    const auto tiny = [&](int op) { return g.ops[op].duration_ns() < kShortKernelNs; };
    // The ops this stream runs tiny at least once: a loop over tensors of all sizes.
    absl::flat_hash_set<StringRef> looped;
    for (int op : stream) {
      if (tiny(op)) looped.insert(g.ops[op].kernel->name);
    }
    const auto in_run = [&](int op) {
      return tiny(op) || (looped.contains(g.ops[op].kernel->name) &&
                          ctx.classes.Of(ctx.strings, g.ops[op].kernel->name) == KernelClass::kMemoryBound);
    };
    for (size_t i = 0; i < stream.size();) {
      if (!in_run(stream[i])) {
        ++i;
        continue;
      }
      std::vector<int> run;
      int64_t work = 0;
      for (; i < stream.size() && in_run(stream[i]) && run.size() < static_cast<size_t>(kKernelsPerFusedLaunch); ++i) {
        run.push_back(stream[i]);
        work += std::max<int64_t>(0, g.ops[stream[i]].duration_ns() - kKernelFixedCostNs);
      }
      if (run.size() < 2) continue;
      fix.edit.op_duration[run.front()] = work + kKernelFixedCostNs;
      for (size_t k = 1; k < run.size(); ++k) fix.edit.op_duration[run[k]] = 0;
      DropLaunches(g, run, run.front(), &fix.edit);
    }
  }
  if (fix.edit.empty()) return std::nullopt;
  return fix;
}

}  // namespace gpuspy::analysis::replay
