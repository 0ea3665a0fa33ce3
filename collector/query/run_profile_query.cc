// QueryEngine::GetRunProfile: one side of `gpuspy diff` from stored events. The job's analyses
// (cached, job-level findings applied) pick the steps; each compared step's events are read
// back once more for what the profile counts by name (analysis/diff/step_facts.h).
#include <map>
#include <set>
#include <shared_mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/diff/run_diff.h"
#include "analysis/diff/run_profile.h"
#include "analysis/diff/run_selector.h"
#include "collector/query/query_engine.h"

namespace gpuspy::collector {
namespace {

// The request as the selector the CLI and HTTP parsed it from (run_selector.h).
analysis::RunSelector SelectorOf(const v1::GetRunProfileRequest& r) {
  analysis::RunSelector s;
  s.base = r.job_id();
  if (r.has_rank()) s.rank = r.rank();
  if (r.has_first_step()) s.steps.first = r.first_step();
  if (r.has_last_step()) s.steps.last = r.last_step();
  return s;
}

}  // namespace

absl::StatusOr<v1::GetRunProfileResponse> QueryEngine::GetRunProfile(
    const v1::GetRunProfileRequest& request) {
  absl::StatusOr<std::vector<ProcessRecord>> all = ProcessesOf(request.job_id(), 0);
  if (!all.ok()) return all.status();
  std::vector<ProcessRecord> processes = *all;
  if (request.has_rank()) {
    std::set<int32_t> ranks_present;
    for (const ProcessRecord& p : *all) ranks_present.insert(p.identity.rank());
    std::erase_if(processes,
                  [&](const ProcessRecord& p) { return p.identity.rank() != request.rank(); });
    if (processes.empty()) {
      return absl::NotFoundError(absl::StrCat("job '", request.job_id(), "' has no rank ",
                                              request.rank(), " (ranks: ",
                                              absl::StrJoin(ranks_present, ", "), ")"));
    }
  }
  // Cross-rank findings need every rank of the job, whichever ranks are compared.
  AnalysisBudget::Lease lease(&budget_);
  absl::StatusOr<std::map<uint64_t, std::vector<analysis::StepAnalysis>>> job =
      AnalyzeJob(*all, &lease);
  if (!job.ok()) return job.status();

  const analysis::RunSelector selector = SelectorOf(request);
  std::vector<const ProcessRecord*> owners;
  std::vector<const analysis::StepAnalysis*> selected;
  std::set<int32_t> ranks;
  for (const ProcessRecord& p : processes) {
    for (const analysis::StepAnalysis& s : (*job)[p.process_id]) {
      if (!selector.steps.Contains(s.report.step().number())) continue;
      owners.push_back(&p);
      selected.push_back(&s);
      ranks.insert(p.identity.rank());
    }
  }
  if (selected.empty()) {
    return absl::NotFoundError(absl::StrCat("no steps in ", analysis::SelectorLabel(selector)));
  }
  const analysis::ComparedSelection selection = analysis::ComparedSteps(selected);
  std::vector<analysis::ProfiledStep> steps;
  // One classification per kernel name of each process, for all its steps.
  std::map<uint64_t, analysis::KernelClasses> classes;
  for (size_t i = 0; i < selected.size(); ++i) {
    if (!selection.compared[i]) continue;
    if (cancelled_.load()) return absl::CancelledError("gpuspyd is stopping");
    const v1::Step& step = selected[i]->report.step();
    absl::StatusOr<WindowEvents> window =
        reader_.Read(owners[i]->process_id, step.start_ns(), step.end_ns());
    if (!window.ok()) return window.status();
    std::shared_lock lock(window->dictionary->mu);
    steps.push_back({selected[i], analysis::MeasureStepFacts(window->events,
                                                             window->dictionary->dict.strings(),
                                                             {step.start_ns(), step.end_ns()},
                                                             &classes[owners[i]->process_id])});
  }
  v1::GetRunProfileResponse out;
  *out.mutable_profile() = analysis::BuildRunProfile(
      analysis::SelectorLabel(selector), steps, static_cast<uint32_t>(selected.size()),
      selection.warmup_included,
      static_cast<uint32_t>(ranks.size()));
  return out;
}

absl::StatusOr<v1::DiffRunsResponse> QueryEngine::DiffRuns(const v1::DiffRunsRequest& request) {
  std::vector<v1::RunProfile> sides;
  for (const auto& [name, side] : {std::pair<const char*, const v1::GetRunProfileRequest*>{"a", &request.a()},
                                   {"b", &request.b()}}) {
    absl::StatusOr<v1::GetRunProfileResponse> p = GetRunProfile(*side);
    if (!p.ok()) return absl::Status(p.status().code(), absl::StrCat(name, ": ", p.status().message()));
    sides.push_back(std::move(*p->mutable_profile()));
  }
  if (absl::Status st = analysis::CheckComparable(sides[0], sides[1]); !st.ok()) return st;
  v1::DiffRunsResponse out;
  *out.mutable_diff() = analysis::DiffRuns(sides[0], sides[1]);
  return out;
}

}  // namespace gpuspy::collector
