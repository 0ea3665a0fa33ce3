// new_kernels: a steady step runs kernel names no earlier step ran (info, no lost time).
#include "analysis/detectors/step_context.h"
#include "analysis/detectors/series_detectors.h"
#include "analysis/evidence.h"
#include "model/units.h"

namespace gpuspy::analysis {

std::optional<v1::Finding> DetectNewKernels(const SeriesStep& s) {
  if (s.fresh_kernels.empty()) return std::nullopt;
  v1::Finding f;
  f.set_detector(v1::new_kernels);
  f.set_title(std::to_string(s.fresh_kernels.size()) + " kernels never seen in earlier steps");
  f.set_lost_ns(0);
  f.set_severity(v1::info);
  AddEvidence(&f, "kernel", s.fresh_kernels[0]);
  f.set_fix_hint("a new code path or a recompile; expected only if the step does something "
                 "different (evaluation, checkpoint)");
  return f;
}

}  // namespace gpuspy::analysis
