// One process's events held in memory (a trace file), analysed step by step the way the collector
// analyses the same events after `gpuspy import` stored them: cut into the same batches
// (kEventsPerImportBatch), steps found per batch, each step analysed over the batches that overlap
// it, the memory level carried from the stretch before it. Same input, same batches, same report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/step_segmenter.h"
#include "analysis/step_series.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

// Events per batch of an imported trace (gpuspy import cuts traces into batches of this size).
inline constexpr size_t kEventsPerImportBatch = 4096;

// A trace's events cut into import batches, each with its time range.
struct ImportBatches {
  std::vector<EventColumns> batches;
  std::vector<std::pair<int64_t, int64_t>> ranges;  // [min start, max end] of each batch
};
ImportBatches CutIntoImportBatches(const EventColumns& events);

// Every step of the process (NVTX steps, else period-detected, else fixed windows), analysed on
// its own (no cross-step or cross-rank findings: see job_analysis.h), in step number order.
// NVTX steps are the ranges matching `step_pattern` (step_segmenter.h).
std::vector<StepAnalysis> AnalyzeProcessSteps(const ImportBatches& batches,
                                              const StringTable& strings, uint64_t process_id,
                                              const std::string& step_pattern = kDefaultStepPattern);

}  // namespace gpuspy::analysis
