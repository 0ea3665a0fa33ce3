// What a step is (StepReport.kind), decided once, after every pass that can change it: a time
// window is no step at all (step_source.h); a step whose recording cannot carry a verdict says
// so (data_quality.h); otherwise steady, or why not (the warm-up and outlier findings of
// step_series.h). The screens show the kind; none decides it.
#pragma once

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

v1::StepKind StepKindOf(const v1::StepReport& report);

// The kind as people read it: "steady", "warm-up", "outlier", "not steady", "time window, not a
// step", "insufficient data".
const char* StepKindLabel(v1::StepKind kind);

}  // namespace gpuspy::analysis
