// launch_storm's fix: runs of tiny kernels become one fused launch each (torch.compile, a
// foreach/fused optimizer, CUDA graphs): the launches and the host's per-op cost go, and the
// fused kernel does the tiny kernels' work less their fixed costs (kKernelFixedCostNs once).
#include "analysis/detectors/detectors.h"
#include "analysis/replay/edits/edits.h"

namespace gpuspy::analysis::replay {

std::optional<Fix> LaunchStormFix(const StepContext& /*ctx*/, const StepGraph& g) {
  Fix fix;
  fix.description = "the tiny kernels fused into one launch per " +
                    std::to_string(kKernelsPerFusedLaunch) + " (torch.compile, foreach, CUDA graphs)";
  for (const std::vector<int>& stream : KernelsByStream(g)) {
    for (size_t i = 0; i < stream.size();) {
      const auto tiny = [&](size_t k) { return g.ops[stream[k]].duration_ns() < kShortKernelNs; };
      if (!tiny(i)) {
        ++i;
        continue;
      }
      std::vector<int> run;
      int64_t work = 0;
      for (; i < stream.size() && tiny(i) && run.size() < static_cast<size_t>(kKernelsPerFusedLaunch); ++i) {
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
