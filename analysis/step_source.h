// What a step is, told by how it was found (Step.source): a real iteration of the program (an NVTX
// range matching the step pattern, "nvtx:<pattern>"; a repeating kernel sequence, "period:<n>
// kernels") or a fixed time window cut because neither was found ("window:<ms>ms"). A window is
// not a step: it is never steady state, the job summary does not take a step time from it, and
// what is said about it says "window". This is the one place that reads the source; every screen
// reads the decision from StepReport.kind (step_kind.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

// The source of a fixed time window of `window_ns`: "window:1000ms".
std::string WindowSource(int64_t window_ns);

// Whether a step with this source is a time window, not a step.
bool IsTimeWindow(std::string_view source);
inline bool IsTimeWindow(const v1::Step& step) { return IsTimeWindow(step.source()); }

// Whether the step was found by its kernels' period ("period:…"): cut at the host's launch of
// each period's first kernel (period_detector.cc).
bool IsPeriodStep(std::string_view source);

// The kernels of one period of a period step ("period:346 kernels" -> 346); 0 for any other
// source.
uint64_t PeriodKernels(std::string_view source);

// "window" or "step": the word for it in what people read.
std::string_view StepNoun(std::string_view source);

// Why a window is not a step, in one line: "a 1000 ms time window, not a step: no NVTX range
// matched the step pattern and no repeating kernel sequence was found".
std::string WindowExplanation(std::string_view source);

// The evidence key under which findings on a window carry WindowExplanation.
inline constexpr char kWindowEvidenceKey[] = "window";

// Adds the window's explanation to each finding of `report` that lacks it, first in its
// evidence, when the report's step is a time window; nothing otherwise. Idempotent: the series
// and cross-rank passes add findings after the step's own, and each calls it.
void MarkWindowFindings(v1::StepReport* report);

}  // namespace gpuspy::analysis
