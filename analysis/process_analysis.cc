#include "analysis/process_analysis.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/kernel_classes.h"
#include "analysis/memory_usage.h"

namespace gpuspy::analysis {
namespace {

// "a; b", or whichever is not empty.
std::string JoinNotes(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return absl::StrCat(a, "; ", b);
}

}  // namespace

absl::StatusOr<ProcessAnalysis> AnalyzeSteps(BatchSource& source,
                                             const std::vector<StepWindow>& steps,
                                             uint64_t process_id, const ProcessAnalysisHooks& hooks) {
  ProcessAnalysis out;
  out.steps.reserve(steps.size());
  auto loss_note = [&](const StepWindow& s) { return hooks.loss_note ? hooks.loss_note(s) : ""; };
  // Where the stretch before each step begins: the previous step's end; the first step's
  // stretch is everything the process did before it.
  int64_t previous_end = hooks.stretch_from;
  KernelClasses classes;  // one classification per kernel name for all of the process's steps
  for (const StepWindow& s : steps) {
    const int64_t before_from = std::exchange(previous_end, std::max(previous_end, s.end_ns));
    if (hooks.proceed) {
      if (absl::Status st = hooks.proceed(); !st.ok()) return st;
    }
    if (hooks.reuse) {
      absl::StatusOr<ProcessAnalysisHooks::Reused> kept = hooks.reuse(s);
      if (!kept.ok()) return kept.status();
      if (kept->analysis != nullptr) {
        out.steps.push_back(*kept->analysis);
        // The process-wide part of the note (drops, gaps) may have changed since.
        out.steps.back().report.set_capture_note(JoinNotes(loss_note(s), kept->window_note));
        out.window_notes[s.number] = std::move(kept->window_note);
        continue;
      }
    }
    StepAnalysis a;
    absl::StatusOr<std::string> window_note =
        source.WithWindow(s.start_ns, s.end_ns, [&](const EventColumns& events, const StringTable& strings) {
          a = AnalyzeStep(events, strings, s, process_id, &classes);
        });
    if (!window_note.ok()) return window_note.status();
    if (hooks.keep) {
      if (absl::Status st = hooks.keep(a); !st.ok()) return st;
    }
    if (before_from < s.start_ns) {
      // Batch by batch: the stretch before the first step is the whole start-up.
      absl::Status read = source.ForEachBatchIn(
          before_from, s.start_ns, [&](const EventColumns& events, const StringTable& strings) {
            AppendStretch(MeasureWindowMemory(events, strings, before_from, s.start_ns), &a.memory.before);
          });
      if (!read.ok()) return read;
    }
    a.report.set_capture_note(JoinNotes(loss_note(s), *window_note));
    out.steps.push_back(std::move(a));
    out.window_notes[s.number] = *std::move(window_note);
    ++out.steps_analysed;
  }
  return out;
}

absl::StatusOr<ProcessAnalysis> AnalyzeProcess(BatchSource& source, const StepPolicy& policy,
                                               uint64_t process_id, const ProcessAnalysisHooks& hooks) {
  absl::StatusOr<std::vector<StepWindow>> steps = FindSteps(source, policy);
  if (!steps.ok()) return steps.status();
  return AnalyzeSteps(source, *steps, process_id, hooks);
}

std::vector<StepAnalysis> AnalyzeProcessSteps(const ImportBatches& batches,
                                              const StringTable& strings, uint64_t process_id,
                                              const std::string& step_pattern) {
  InMemoryBatches source(batches, strings);
  // An in-memory source fails nothing.
  return AnalyzeProcess(source, StepPolicy::ForPattern(step_pattern), process_id)->steps;
}

}  // namespace gpuspy::analysis
