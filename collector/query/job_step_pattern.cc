// QueryEngine::SetStepPattern: a job's steps found again under its own step pattern. NVTX steps
// are indexed as batches arrive, so a new pattern means reading the job's stored batches again,
// one at a time (memory: one decoded batch), as ingest would have seen them.
//
// Known gap: on a live job, a batch stored after this pass read past it and before ReplaceSteps
// has its steps (indexed with the new pattern already) replaced away; setting the pattern again,
// or once the job has ended, finds them. Closing it needs the store's step write and the pass to
// share a lock with ingest, which the hot path should not take for a rare admin call.
#include <map>

#include "absl/strings/str_cat.h"
#include "collector/query/query_engine.h"

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
    // Per batch, as ingest indexes them; a step number seen again replaces the earlier record.
    std::map<int64_t, StepRecord> by_number;
    absl::StatusOr<uint64_t> read = reader_.ForEachBatch(
        p.process_id, [&](const EventColumns& events, const StringTable& strings) {
          if (events.nvtx_ranges.empty()) return;
          for (const analysis::StepWindow& w : (*segmenter)->FindSteps(events, strings)) {
            by_number[w.number] = {p.process_id, w.number, w.start_ns, w.end_ns, w.source};
          }
        });
    if (!read.ok()) return read.status();
    std::vector<StepRecord> steps;
    for (auto& [n, s] : by_number) steps.push_back(std::move(s));
    if (absl::Status st = store_->ReplaceSteps(p.process_id, steps); !st.ok()) return st;
    // Cached analyses are checked against the batches, which did not change: drop them.
    cache_.Forget(p.process_id);
    out.set_processes(out.processes() + 1);
    out.set_nvtx_steps(out.nvtx_steps() + steps.size());
  }
  return out;
}

}  // namespace gpuspy::collector
