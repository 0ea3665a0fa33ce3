#include "analysis/process_analysis.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/kernel_classes.h"
#include "analysis/memory_usage.h"
#include "analysis/step_finder.h"

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
                                              const std::string& step_pattern, unsigned threads) {
  InMemoryBatches source(batches, strings);
  // An in-memory source fails nothing.
  const std::vector<StepWindow> steps = *FindSteps(source, StepPolicy::ForPattern(step_pattern));
  const size_t slices = std::min<size_t>(std::max(1u, threads), steps.size());
  if (slices <= 1) return AnalyzeSteps(source, steps, process_id)->steps;
  // Contiguous slices, each over a source of its own (a source keeps the window it hands out).
  // A slice's first stretch starts where the steps before it ended, as it would one by one.
  std::vector<std::vector<StepAnalysis>> analysed(slices);
  auto analyse = [&](size_t slice) {
    const size_t begin = steps.size() * slice / slices, end = steps.size() * (slice + 1) / slices;
    ProcessAnalysisHooks hooks;
    for (size_t i = 0; i < begin; ++i) hooks.stretch_from = std::max(hooks.stretch_from, steps[i].end_ns);
    InMemoryBatches mine(batches, strings);
    const std::vector<StepWindow> part(steps.begin() + static_cast<ptrdiff_t>(begin),
                                       steps.begin() + static_cast<ptrdiff_t>(end));
    analysed[slice] = AnalyzeSteps(mine, part, process_id, hooks)->steps;
  };
  std::vector<std::thread> pool;
  for (size_t slice = 1; slice < slices; ++slice) pool.emplace_back(analyse, slice);
  analyse(0);
  for (std::thread& t : pool) t.join();
  std::vector<StepAnalysis> out;
  out.reserve(steps.size());
  for (std::vector<StepAnalysis>& part : analysed) {
    std::move(part.begin(), part.end(), std::back_inserter(out));
  }
  return out;
}

}  // namespace gpuspy::analysis
