// Whether a step's events can carry a verdict. An expert reading real traces finds windows where
// any confident verdict is wrong because the recording, not the program, made the timeline look
// the way it does: the profiler started or stopped mid-step, the range profiler replayed every
// kernel, a CUDA graph's node records are missing, nothing ran on the GPU. Such steps say
// "insufficient data: <why>" instead of a bottleneck (docs/detectors.md, "Data quality").
#pragma once

#include <cstdint>
#include <string>

#include "analysis/intervals.h"
#include "analysis/step_segmenter.h"
#include "gpuspy/v1/report.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

// A recording span (Kineto's "Trace" event) must cover at least this share of the step.
inline constexpr double kMinCoveredShare = 0.90;
// Graph launches in the last part of the step may have their kernels in the next one.
inline constexpr double kGraphTailShare = 0.20;
// The first step of a recording is incomplete when GPU work launched before the recording
// began (no launch call recorded for it) runs for at least this share of the step.
inline constexpr double kMinUnlaunchedShare = 0.05;

// A step whose events were cut: at least kMinMissingLaunchOps of its GPU operations have no
// launch call anywhere in the recording, more than kMissingLaunchFactor times the launch calls
// the step itself made of recorded work. A loop whose host runs a step ahead has as many of each
// (its GPU runs what the step before launched); an excerpt cut from a longer trace, or a sampled
// one, keeps the GPU records and few of the calls, and nothing in it says what the host did.
inline constexpr uint64_t kMinMissingLaunchOps = 3;
inline constexpr uint64_t kMissingLaunchFactor = 4;

// The step's own checks (everything but "first window", which needs the step's place in the
// series: MarkFirstWindow), and unlaunched_gpu_ns for that one.
v1::DataQuality AssessDataQuality(const EventColumns& events, const StringTable& strings,
                                  const StepWindow& step, const v1::StepBreakdown& breakdown);

// GPU time in the window of work whose launch call is not among `events` (launched before the
// recording, when the window is the recording's first).
int64_t UnlaunchedGpuNs(const EventColumns& events, Interval window);

// The first step of a process's recording, when found without step markers: insufficient when
// work launched before the recording began (unlaunched_gpu_ns) runs for kMinUnlaunchedShare of
// it or more.
void MarkFirstWindow(v1::StepReport* first);

// The last step of a process found by its period (period_detector.h) runs from the last
// recurrence to the last GPU work: when the run stopped mid-iteration it holds only part of one
// (52 kernels of a 346-kernel period). Insufficient when it launched fewer than this share of
// the period's kernels (the detector's own "most of a period" between recurrences).
inline constexpr double kMinLastPeriodShare = 0.75;
void MarkLastPeriodStep(v1::StepReport* last);

// Marks `report` insufficient with `reason` (keeps earlier reasons) and refreshes its
// insufficient_data finding; the caller ranks findings afterwards (RankFindings).
void MarkInsufficient(v1::StepReport* report, const std::string& reason);

// Adds (or refreshes) the insufficient_data finding of a report whose data_quality says so.
void AddInsufficientDataFinding(v1::StepReport* report);

}  // namespace gpuspy::analysis
