#include "analysis/process_analysis.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "analysis/memory_usage.h"
#include "analysis/period_detector.h"
#include "analysis/step_segmenter.h"

namespace gpuspy::analysis {
namespace {

// Batches overlapping [from_ns, to_ns), in batch order: the storage query's rule
// (max_ns >= from AND min_ns < to).
template <typename Visit>
void ForEachBatchIn(const ImportBatches& b, int64_t from_ns, int64_t to_ns, Visit visit) {
  for (size_t i = 0; i < b.batches.size(); ++i) {
    if (b.ranges[i].second >= from_ns && b.ranges[i].first < to_ns) visit(b.batches[i]);
  }
}

std::vector<StepWindow> FindProcessSteps(const ImportBatches& b, const StringTable& strings,
                                         const std::string& step_pattern) {
  // Per batch, as ingest indexes them; a step number seen again replaces the earlier record.
  const StepSegmenter segmenter(step_pattern);
  std::map<int64_t, StepWindow> by_number;
  for (const EventColumns& batch : b.batches) {
    if (batch.nvtx_ranges.empty()) continue;
    for (StepWindow& w : segmenter.FindSteps(batch, strings)) by_number[w.number] = std::move(w);
  }
  std::vector<StepWindow> steps;
  for (auto& [n, w] : by_number) steps.push_back(std::move(w));
  if (!steps.empty()) return steps;
  StepDetectionInput input;
  for (const EventColumns& batch : b.batches) input.Add(batch);
  steps = input.Periodic();
  if (steps.empty()) steps = input.Fixed(kDefaultWindowNs);
  std::sort(steps.begin(), steps.end(),
            [](const StepWindow& x, const StepWindow& y) { return x.number < y.number; });
  return steps;
}

}  // namespace

ImportBatches CutIntoImportBatches(const EventColumns& events) {
  ImportBatches out;
  out.batches = events.Split(events.size() / kEventsPerImportBatch + 1);
  for (const EventColumns& b : out.batches) out.ranges.push_back(b.TimeRange());
  return out;
}

std::vector<StepAnalysis> AnalyzeProcessSteps(const ImportBatches& batches,
                                              const StringTable& strings, uint64_t process_id,
                                              const std::string& step_pattern) {
  std::vector<StepAnalysis> out;
  int64_t previous_end = std::numeric_limits<int64_t>::min();
  EventColumns window;
  for (const StepWindow& s : FindProcessSteps(batches, strings, step_pattern)) {
    const int64_t before_from = std::exchange(previous_end, std::max(previous_end, s.end_ns));
    window.clear();
    ForEachBatchIn(batches, s.start_ns, s.end_ns,
                   [&](const EventColumns& b) { window.Append(b); });
    StepAnalysis a = AnalyzeStep(window, strings, s, process_id);
    if (before_from < s.start_ns) {
      ForEachBatchIn(batches, before_from, s.start_ns, [&](const EventColumns& b) {
        AppendStretch(MeasureWindowMemory(b, strings, before_from, s.start_ns), &a.memory.before);
      });
    }
    a.report.set_capture_note("");
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace gpuspy::analysis
