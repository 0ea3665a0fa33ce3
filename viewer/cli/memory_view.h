// A step's device memory in text (StepReport.memory, from the analysis' memory_usage.h).
#pragma once

#include <string>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::cli {

// "device memory (segments): 1.3 GiB reserved (+64.0 MiB in the step), peak 1.4 GiB"; with the
// allocator's totals, the allocated figures too.
std::string MemoryLine(const v1::StepMemory& memory);

}  // namespace gpuspy::cli
