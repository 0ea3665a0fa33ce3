// One process analysed step by step, wherever its events come from (batch_source.h): its steps
// found by the one rule (step_finder.h), each analysed once on its own (AnalyzeStep) over the
// batches that overlap it, with the memory level carried from the stretch before it. gpuspyd's
// query layer and `gpuspy analyze` both call this; cross-step and cross-rank findings come after,
// from job_analysis.h.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/batch_source.h"
#include "analysis/in_memory_batches.h"
#include "analysis/step_finder.h"
#include "analysis/step_series.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

// What a caller that keeps analyses between calls (gpuspyd's cache, its memory budget, its
// shutdown) adds to the loop. Every member is optional.
struct ProcessAnalysisHooks {
  // Asked before each step; an error ends the analysis with it (gpuspyd is stopping).
  std::function<absl::Status()> proceed;
  // The part of a step's capture note that says what the process lost (loss_notes.h).
  std::function<std::string(const StepWindow&)> loss_note;
  // A step analysed before over the same window and data, to use as it is (`analysis` null:
  // analyse it), with the window note it had then.
  struct Reused {
    const StepAnalysis* analysis = nullptr;
    std::string window_note;
  };
  std::function<absl::StatusOr<Reused>(const StepWindow&)> reuse;
  // Each fresh analysis, before the stretch before it is measured: gpuspyd charges it to the
  // query's share of memory, and an error ends the analysis.
  std::function<absl::Status(const StepAnalysis&)> keep;
  // Where the stretch before the first of `steps` begins: the end of the step before it when
  // `steps` are a later part of the process's steps (gpuspyd's report of recent steps), so that
  // only that stretch is read, not everything the process did before.
  int64_t stretch_from = std::numeric_limits<int64_t>::min();
};

struct ProcessAnalysis {
  std::vector<StepAnalysis> steps;  // in step number order
  // What of each step's window could not be read (BatchSource::WithWindow), by step number.
  std::map<int64_t, std::string> window_notes;
  uint64_t steps_analysed = 0;  // steps analysed afresh (the others were reused)
};

// `steps` (in step number order) analysed over `source`. Each report's capture note is the
// step's loss note and its window note, "; "-joined.
absl::StatusOr<ProcessAnalysis> AnalyzeSteps(BatchSource& source,
                                             const std::vector<StepWindow>& steps,
                                             uint64_t process_id,
                                             const ProcessAnalysisHooks& hooks = {});

// FindSteps, then AnalyzeSteps: every step of the process analysed on its own (no cross-step or
// cross-rank findings: see job_analysis.h), in step number order.
absl::StatusOr<ProcessAnalysis> AnalyzeProcess(BatchSource& source, const StepPolicy& policy,
                                               uint64_t process_id,
                                               const ProcessAnalysisHooks& hooks = {});

// A trace held in memory (CutIntoImportBatches) through AnalyzeProcess, its NVTX steps the ranges
// matching `step_pattern`: what `gpuspy analyze` and `gpuspy diff` report per process. With
// `threads` > 1 the steps are analysed in that many contiguous slices at once (a step's analysis
// reads only its own window and the stretch before it): the same analyses, sooner.
std::vector<StepAnalysis> AnalyzeProcessSteps(const ImportBatches& batches,
                                              const StringTable& strings, uint64_t process_id,
                                              const std::string& step_pattern = kDefaultStepPattern,
                                              unsigned threads = 1);

}  // namespace gpuspy::analysis
