// Whether a step's report holds a finding of one detector: what the step's kind (step_kind.h),
// the straggler's cause and the rank matrix each ask of a report.
#pragma once

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

bool HasFinding(const v1::StepReport& report, v1::Detector detector);

}  // namespace gpuspy::analysis
