// Per-step breakdown: where a step's wall time went on the GPU and on the host.
// Pure function of the step's events; definitions of every figure are in docs/detectors.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/kernel_classes.h"
#include "analysis/step_segmenter.h"
#include "gpuspy/v1/report.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

// How many kernels the report lists by total time.
inline constexpr int kTopKernels = 10;
// GPU idle gaps shorter than this between GPU work count as launch-bound.
inline constexpr int64_t kLaunchGapNs = 30'000;

// `events` are the process's events overlapping the step window (more is fine: everything is
// clipped to the window). Fills breakdown, top kernels, counts; findings are left to detectors.
// Distinct names of the kernels that ran in the step (for the cross-step analysis).
std::vector<std::string> DistinctKernelNames(const EventColumns& events, const StringTable& strings,
                                             const StepWindow& step);

v1::StepReport BuildStepReport(const EventColumns& events, const StringTable& strings,
                               const StepWindow& step, uint64_t process_id);
// The same, classifying kernels with the process's `classes` (one ClassifyKernel per name for all
// of its steps; AnalyzeStep passes the one AnalyzeSteps keeps).
v1::StepReport BuildStepReport(const EventColumns& events, const StringTable& strings,
                               const StepWindow& step, uint64_t process_id, KernelClasses& classes);

}  // namespace gpuspy::analysis
