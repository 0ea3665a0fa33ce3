// warmup: the leading steps slower than kWarmupFactor x the median (CUDA start-up, autotuning,
// compilation, allocator growth). Excluded from the steady figures; its lost time is the excess.
#include "analysis/detectors/step_context.h"
#include "analysis/detectors/series_detectors.h"
#include "analysis/evidence.h"
#include "model/units.h"

namespace gpuspy::analysis {

bool IsWarmupWall(int64_t wall_ns, int64_t median_wall_ns) {
  return static_cast<double>(wall_ns) > kWarmupFactor * static_cast<double>(median_wall_ns);
}

v1::Finding WarmupFinding(const SeriesStep& s) {
  v1::Finding f;
  f.set_detector(v1::warmup);
  f.set_title("warm-up step: " + FormatMs(s.wall_ns) + " vs a steady " + FormatMs(s.median_wall_ns));
  f.set_lost_ns(s.wall_ns - s.median_wall_ns);
  f.set_severity(v1::info);
  AddEvidence(&f, "new_kernels", Count(s.fresh_kernels.size()));
  AddDriverEvidence(s, &f);
  f.set_fix_hint("excluded from steady-state figures; warm-up covers CUDA start-up (context "
                 "creation, module loading), cuDNN autotuning, torch.compile compilation and "
                 "allocator growth");
  return f;
}

}  // namespace gpuspy::analysis
