// One side of a comparison (`gpuspy diff`): a selection of steps (a job, a rank, a step range)
// summarised as means per step, by name, so that two runs can be paired kernel by kernel and
// call site by call site (run_diff.h). The same function serves the collector (events read back
// from storage) and `gpuspy diff` on trace files (events in memory).
#pragma once

#include <string>
#include <vector>

#include "analysis/diff/step_facts.h"
#include "analysis/step_series.h"
#include "gpuspy/v1/diff.pb.h"

namespace gpuspy::analysis {

// One analysed step (job-level findings applied) and what it did by name.
struct ProfiledStep {
  const StepAnalysis* analysis = nullptr;
  StepFacts facts;
};

// Which steps of a selection are compared: its steady steps, or every step when it has none
// (warmup_included, said in the profile). Callers measure facts only for the steps this picks.
struct ComparedSelection {
  std::vector<bool> compared;  // per step of the selection
  bool warmup_included = false;
};
ComparedSelection ComparedSteps(const std::vector<const StepAnalysis*>& steps);

// The profile of `steps` (those ComparedSteps picked, each with its facts). `steps_seen` counts
// the whole selection, warm-up included; `ranks` the ranks it spans.
v1::RunProfile BuildRunProfile(const std::string& label, const std::vector<ProfiledStep>& steps,
                               uint32_t steps_seen, bool warmup_included, uint32_t ranks);

// A step of a selection whose events are in memory (trace files, tests).
struct SelectedStep {
  const StepAnalysis* analysis = nullptr;
  const EventColumns* events = nullptr;  // the process's events (more than the step is fine)
  const StringTable* strings = nullptr;
  int32_t rank = -1;
};

// ComparedSteps, MeasureStepFacts and BuildRunProfile over steps held in memory.
v1::RunProfile ProfileSelection(const std::string& label, const std::vector<SelectedStep>& steps);

}  // namespace gpuspy::analysis
