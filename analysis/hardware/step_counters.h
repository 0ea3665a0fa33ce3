// What the GPU's own counters read over a step (CounterSampleEvents: CUPTI PM sampling, taken by
// the injected library with GPUSPY_COUNTERS=1): the device-wide readings time-weighted over the
// step, and each kernel class's over the samples its kernels fill. Pure; docs/hardware-floor.md
// ("Counters") says what each reading means and its error.
#pragma once

#include <optional>

#include "analysis/kernel_classes.h"
#include "analysis/step_segmenter.h"
#include "gpuspy/v1/report.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

// A sample is one class's when that class's kernels run through at least this share of it: the
// rest (at most a fifth) can move its reading by at most a fifth of the scale.
inline constexpr double kMinClassFill = 0.8;

// The step's readings; nullopt when no sample of its device overlaps it. The device is the one
// whose kernels (starting in the step) take the most time; without kernels, the samples' first.
std::optional<v1::MeasuredCounters> MeasureStepCounters(const EventColumns& events,
                                                         const StringTable& strings,
                                                         const StepWindow& step,
                                                         KernelClasses& classes);

}  // namespace gpuspy::analysis
