// QueryEngine::SetStepPattern: a job's steps found again under its own step pattern. NVTX steps
// are indexed as batches arrive, so a new pattern means reading the job's stored batches again,
// one at a time (memory: one decoded batch), as ingest would have seen them.
//
// A live job keeps storing batches meanwhile, indexed by ingest with the new pattern (set
// first). One stored after the pass read past it and before ReplaceSteps has its steps replaced
// away: a second, catch-up pass over the batches after the last one read puts them back (upserts
// by step number: what ingest indexed after the replace stays as it is). Left open: an ingest
// thread that read the old pattern before the Set and writes its steps after the replace.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "analysis/step_finder.h"
#include "collector/query/query_engine.h"
#include "collector/query/stored_batches.h"

namespace gpuspy::collector {

absl::StatusOr<v1::SetStepPatternResponse> QueryEngine::SetStepPattern(const v1::SetStepPatternRequest& request) {
  if (patterns_ == nullptr) return absl::FailedPreconditionError("this gpuspyd keeps no per-job step patterns");
  const std::string& job = request.job_id();
  if (job.empty()) return absl::InvalidArgumentError("a job id is required");
  if (!request.step_pattern().empty()) {
    if (absl::Status st = analysis::CheckStepPattern(request.step_pattern()); !st.ok()) return st;
  }
  absl::StatusOr<std::vector<ProcessRecord>> processes = ProcessesOf(job, 0);
  if (!processes.ok()) return processes.status();
  if (absl::Status st = patterns_->Set(job, request.step_pattern()); !st.ok()) return st;
  absl::StatusOr<std::shared_ptr<const analysis::StepSegmenter>> segmenter = patterns_->For(job);
  if (!segmenter.ok()) return segmenter.status();

  v1::SetStepPatternResponse out;
  out.set_step_pattern(request.step_pattern().empty() ? patterns_->default_pattern() : request.step_pattern());
  for (const ProcessRecord& p : *processes) {
    // Per batch, as ingest indexes them (analysis/step_finder.h's rule).
    analysis::NvtxStepIndex index(**segmenter);
    uint64_t next_sequence = 0;  // after the last batch read
    auto find_steps = [&](uint64_t sequence, const EventColumns& events, const StringTable& strings) {
      next_sequence = sequence + 1;
      index.Add(events, strings);
      return true;
    };
    absl::StatusOr<uint64_t> read = reader_.ForEachBatchFrom(p.process_id, 0, 0, 0, find_steps);
    if (!read.ok()) return read.status();
    std::vector<StepRecord> steps;
    for (const analysis::StepWindow& w : index.Steps()) steps.push_back(ToStepRecord(p.process_id, w));
    if (absl::Status st = store_->ReplaceSteps(p.process_id, steps); !st.ok()) return st;
    // The catch-up: batches stored while the first pass ran.
    index.Clear();
    read = reader_.ForEachBatchFrom(p.process_id, 0, 0, next_sequence, find_steps);
    if (!read.ok()) return read.status();
    std::vector<StepRecord> late;
    for (const analysis::StepWindow& w : index.Steps()) late.push_back(ToStepRecord(p.process_id, w));
    if (!late.empty()) {
      if (absl::Status st = store_->UpsertSteps(late); !st.ok()) return st;
    }
    for (StepRecord& s : late) {
      if (std::none_of(steps.begin(), steps.end(), [&](const StepRecord& e) { return e.number == s.number; })) {
        steps.push_back(std::move(s));
      }
    }
    // Cached analyses are checked against the batches, which did not change: drop them.
    cache_.Forget(p.process_id);
    recent_cache_.Forget(p.process_id);
    out.set_processes(out.processes() + 1);
    out.set_nvtx_steps(out.nvtx_steps() + steps.size());
  }
  finished_.Forget(job);
  return out;
}

}  // namespace gpuspy::collector
