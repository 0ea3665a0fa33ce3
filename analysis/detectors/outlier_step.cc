// outlier_step: a step after warm-up slower than kOutlierFactor x the median; new kernels in it
// point at a recompile. Not steady; its lost time is the excess over the median.
#include "analysis/detectors/step_context.h"
#include "analysis/detectors/series_detectors.h"
#include "analysis/evidence.h"
#include "model/units.h"

namespace gpuspy::analysis {

std::optional<v1::Finding> DetectOutlierStep(const SeriesStep& s) {
  if (s.median_wall_ns <= 0 ||
      static_cast<double>(s.wall_ns) <= kOutlierFactor * static_cast<double>(s.median_wall_ns)) {
    return std::nullopt;
  }
  v1::Finding f;
  f.set_detector(v1::outlier_step);
  const int64_t tenths = s.wall_ns * 10 / s.median_wall_ns;
  f.set_title("step " + FormatMs(s.wall_ns) + " is " + std::to_string(tenths / 10) + "." +
              std::to_string(tenths % 10) + "x the median " + FormatMs(s.median_wall_ns));
  f.set_lost_ns(s.wall_ns - s.median_wall_ns);
  f.set_severity(SeverityFor(static_cast<double>(s.wall_ns - s.median_wall_ns) / s.wall_ns));
  AddDriverEvidence(s, &f);
  if (!s.fresh_kernels.empty()) {
    AddEvidence(&f, "new_kernels", Count(s.fresh_kernels.size()), ", e.g. " + s.fresh_kernels[0]);
    f.set_fix_hint("new kernels appeared mid-run: a recompile (torch.compile guard failure / "
                   "dynamic shapes) or a new code path; mark dynamic dims or pad shapes");
  } else {
    f.set_fix_hint("an occasional slow step: checkpointing, evaluation, logging or a straggling "
                   "input batch");
  }
  return f;
}

}  // namespace gpuspy::analysis
