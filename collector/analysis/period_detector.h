// Steps without NVTX: most jobs run with no profiler, so no ProfilerStep ranges exist. A training
// loop still repeats itself: the same kernels launched in the same order every iteration. This
// finds that repetition; failing that, it cuts fixed time windows (labelled as such).
#pragma once

#include <cstdint>
#include <vector>

#include "collector/analysis/step_segmenter.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

// At least this many repetitions before a period is believed.
inline constexpr int kMinPeriodRepeats = 3;
// Kernel names compared when looking for the loop's recurring pattern.
inline constexpr size_t kPatternLength = 32;
// Period candidates tried, and sampled positions per candidate (bounds the cost on huge runs).
inline constexpr size_t kMaxCandidates = 256;
inline constexpr size_t kMatchSamples = 20000;
// A recurrence of the opening kernels is an iteration boundary when the host paused before it
// at least this share of the longest pause.
inline constexpr double kBoundaryPauseShare = 0.25;
// Shifted by the period, at least this share of the launch sequence must match itself.
inline constexpr double kMinSelfMatch = 0.90;
// Window length for the fallback.
inline constexpr int64_t kDefaultWindowNs = 1'000'000'000;

// Steps from the kernel launch sequence. An iteration boundary is taken where the host pauses
// longest between launches in the steady half of the run (input loading, end-of-step sync); the
// kernels opening that iteration recur once per iteration; the period is the recurrence distance
// under which the whole sequence best matches itself. Each step runs from one recurrence to the
// next, the last to the process's last GPU work. Source "period:<N> kernels". Empty without a
// convincing period.
std::vector<StepWindow> DetectPeriodicSteps(const EventColumns& events, const StringTable& strings);

// Fixed windows over the process's activity, numbered by position from its first event (windows
// without any CUDA work are left out), source "window:<ms>ms".
std::vector<StepWindow> FixedWindows(const EventColumns& events, int64_t window_ns);

}  // namespace gpuspy::analysis
