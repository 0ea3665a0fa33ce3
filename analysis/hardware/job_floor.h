// The job's hardware floor: the medians of its steps' (step_floor.h), for the summary screens.
#pragma once

#include <vector>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

// Over `steps` (the job summary's figure steps), those with work figures; the first step's
// notes when none has any.
v1::JobFloor SummarizeFloor(const std::vector<const v1::StepReport*>& steps);

}  // namespace gpuspy::analysis
