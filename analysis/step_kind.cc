#include "analysis/step_kind.h"

#include "analysis/has_finding.h"
#include "analysis/step_source.h"

namespace gpuspy::analysis {

v1::StepKind StepKindOf(const v1::StepReport& r) {
  if (IsTimeWindow(r.step())) return v1::STEP_KIND_WINDOW;
  if (r.data_quality().insufficient()) return v1::STEP_KIND_INSUFFICIENT_DATA;
  if (r.steady_state()) return v1::STEP_KIND_STEADY;
  if (HasFinding(r, v1::warmup)) return v1::STEP_KIND_WARMUP;
  if (HasFinding(r, v1::outlier_step)) return v1::STEP_KIND_OUTLIER;
  return v1::STEP_KIND_UNSTEADY;
}

const char* StepKindLabel(v1::StepKind kind) {
  switch (kind) {
    case v1::STEP_KIND_STEADY: return "steady";
    case v1::STEP_KIND_WARMUP: return "warm-up";
    case v1::STEP_KIND_OUTLIER: return "outlier";
    case v1::STEP_KIND_WINDOW: return "time window, not a step";
    case v1::STEP_KIND_INSUFFICIENT_DATA: return "insufficient data";
    default: return "not steady";
  }
}

}  // namespace gpuspy::analysis
