#include "collector/query/query_engine.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <shared_mutex>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analysis/job_analysis.h"
#include "analysis/process_analysis.h"
#include "analysis/step_finder.h"
#include "collector/query/event_pages.h"
#include "collector/query/job_processes.h"
#include "collector/query/loss_notes.h"
#include "collector/query/stored_batches.h"
#include "model/event_selection.h"

namespace gpuspy::collector {
namespace {

// Which of a process's steps a report request selects.
std::vector<StepRecord> SelectSteps(std::vector<StepRecord> steps,
                                    const v1::GetStepReportRequest& request) {
  std::sort(steps.begin(), steps.end(),
            [](const StepRecord& a, const StepRecord& b) { return a.number < b.number; });
  if (request.all()) return steps;
  if (request.last() > 0) {
    if (steps.size() > request.last()) steps.erase(steps.begin(), steps.end() - request.last());
    return steps;
  }
  std::erase_if(steps, [&](const StepRecord& s) { return s.number != request.step(); });
  return steps;
}

// Whether each of a process's step reports (in its order) is one `request` asks for.
std::vector<bool> WantedSteps(const std::vector<v1::StepReport>& reports,
                              const v1::GetStepReportRequest& request) {
  std::vector<StepRecord> records;
  records.reserve(reports.size());
  for (const v1::StepReport& r : reports) records.push_back({0, r.step().number(), 0, 0, ""});
  absl::flat_hash_set<int64_t> selected;
  for (const StepRecord& r : SelectSteps(std::move(records), request)) selected.insert(r.number);
  std::vector<bool> wanted;
  wanted.reserve(reports.size());
  for (const v1::StepReport& r : reports) wanted.push_back(selected.contains(r.step().number()));
  return wanted;
}

// The reports of `analysed` (moved out), per process in step order.
FinishedJobReports::Reports ReportsOf(std::map<uint64_t, std::vector<analysis::StepAnalysis>>&& analysed) {
  FinishedJobReports::Reports reports;
  for (auto& [process_id, steps] : analysed) {
    std::vector<v1::StepReport>& kept = reports[process_id];
    kept.reserve(steps.size());
    for (analysis::StepAnalysis& a : steps) kept.push_back(std::move(a.report));
  }
  return reports;
}

// Hands each report `request` asks for (of the process it names, or of every process) to `add`:
// a copy of kept reports, a move of a query's own.
template <typename Reports, typename Add>
void ForWantedReports(Reports& reports, const v1::GetStepReportRequest& request, Add add) {
  for (auto& [process_id, steps] : reports) {
    if (request.process_id() != 0 && process_id != request.process_id()) continue;
    const std::vector<bool> wanted = WantedSteps(steps, request);
    for (size_t i = 0; i < steps.size(); ++i) {
      if (wanted[i]) add(steps[i]);
    }
  }
}

std::string CaptureNote(const ProcessRecord& p) {
  std::string note;
  if (p.loss.total() > 0) {
    absl::StrAppend(&note, "capture incomplete: ", p.loss.total(),
                    " events dropped by the producer (cupti ", p.loss.cupti_dropped_records,
                    ", queue ", p.loss.queue_dropped_events, ", spill ",
                    p.loss.spill_dropped_events, ")");
  }
  if (p.sequence_gaps() > 0) {
    absl::StrAppend(&note, note.empty() ? "capture incomplete: " : "; ", p.sequence_gaps(),
                    " batches never arrived");
  }
  return note;
}

// The loss part of each step's capture note: only the steps a loss falls into get one
// (loss_notes.h). Without batch marks, every step gets the process-wide note.
std::function<std::string(const StepRecord&)> LossNotesFor(Store* store, const ProcessRecord& p,
                                                           const std::vector<StepRecord>& steps) {
  if (p.loss.total() == 0 && p.sequence_gaps() == 0) {
    return [](const StepRecord&) { return std::string(); };
  }
  absl::StatusOr<std::vector<BatchMark>> marks = store->ListBatchMarks(p.process_id);
  if (!marks.ok()) {
    return [note = CaptureNote(p)](const StepRecord&) { return note; };
  }
  auto notes = std::make_shared<StepLossNotes>(
      FindLossSpans(std::move(*marks), p.max_sequence, p.loss), steps);
  return [notes](const StepRecord& s) { return notes->For(s); };
}

}  // namespace

absl::StatusOr<std::vector<ProcessRecord>> QueryEngine::ProcessesOf(const std::string& job_id,
                                                                    uint64_t process_id) {
  if (job_id.empty()) return absl::InvalidArgumentError("a job id is required");
  absl::StatusOr<std::vector<ProcessRecord>> processes = store_->ListProcesses(job_id);
  if (!processes.ok()) return processes.status();
  if (processes->empty()) return absl::NotFoundError(absl::StrCat("unknown job '", job_id, "'"));
  if (process_id != 0) {
    std::erase_if(*processes, [&](const ProcessRecord& p) { return p.process_id != process_id; });
    if (processes->empty()) {
      return absl::NotFoundError(
          absl::StrCat("job '", job_id, "' has no process ", process_id));
    }
  }
  return processes;
}

void QueryEngine::FillProcessInfo(const ProcessRecord& p, v1::ProcessInfo* out) const {
  out->set_process_id(p.process_id);
  *out->mutable_identity() = p.identity;
  out->set_first_seen_unix_ns(p.first_seen_unix_ns);
  out->set_last_seen_unix_ns(p.last_seen_unix_ns);
  out->set_event_count(p.event_count);
  out->set_batch_count(p.batch_count);
  if (std::optional<LiveProcess> live = connections_->Get(p.process_id); live.has_value()) {
    out->set_state(live->State());
    out->set_mode(live->mode);
    out->set_last_heartbeat_unix_ns(live->last_heartbeat_unix_ns);
    out->set_clock_skew_ns(live->clock_skew_ns);
  } else {
    out->set_state("disconnected");
  }
  out->mutable_loss()->set_cupti_dropped_records(p.loss.cupti_dropped_records);
  out->mutable_loss()->set_queue_dropped_events(p.loss.queue_dropped_events);
  out->mutable_loss()->set_spill_dropped_events(p.loss.spill_dropped_events);
  out->set_sequence_gaps(p.sequence_gaps());
  if (overload_ != nullptr) *out->mutable_overload() = overload_->Get(p.process_id);
}

absl::StatusOr<v1::ListJobsResponse> QueryEngine::ListJobs() {
  absl::StatusOr<std::vector<ProcessRecord>> processes = store_->ListProcesses("");
  if (!processes.ok()) return processes.status();
  std::map<std::string, v1::JobInfo> jobs;
  for (const ProcessRecord& p : *processes) {
    v1::JobInfo& job = jobs[p.identity.job_id()];
    job.set_job_id(p.identity.job_id());
    FillProcessInfo(p, job.add_processes());
    job.set_first_seen_unix_ns(job.first_seen_unix_ns() == 0
                                   ? p.first_seen_unix_ns
                                   : std::min(job.first_seen_unix_ns(), p.first_seen_unix_ns));
    job.set_last_seen_unix_ns(std::max(job.last_seen_unix_ns(), p.last_seen_unix_ns));
    job.set_event_count(job.event_count() + p.event_count);
    absl::StatusOr<std::vector<StepRecord>> steps = StepsOf(p);
    if (!steps.ok()) return steps.status();
    job.set_step_count(job.step_count() + steps->size());
  }
  v1::ListJobsResponse out;
  for (auto& [id, job] : jobs) {
    absl::StatusOr<std::string> pattern = store_->GetJobStepPattern(id);
    if (!pattern.ok()) return pattern.status();
    job.set_step_pattern(*pattern);
    *out.add_jobs() = std::move(job);
  }
  return out;
}

absl::StatusOr<v1::ListStepsResponse> QueryEngine::ListSteps(const v1::ListStepsRequest& request) {
  absl::StatusOr<std::vector<ProcessRecord>> processes =
      ProcessesOf(request.job_id(), request.process_id());
  if (!processes.ok()) return processes.status();
  v1::ListStepsResponse out;
  for (const ProcessRecord& p : *processes) {
    absl::StatusOr<std::vector<StepRecord>> steps = StepsOf(p);
    if (!steps.ok()) return steps.status();
    std::sort(steps->begin(), steps->end(),
              [](const StepRecord& a, const StepRecord& b) { return a.number < b.number; });
    for (const StepRecord& s : *steps) {
      auto* step = out.add_steps();
      step->set_process_id(s.process_id);
      step->set_number(s.number);
      step->set_start_ns(s.start_ns);
      step->set_end_ns(s.end_ns);
      step->set_source(s.source);
    }
  }
  return out;
}

absl::StatusOr<std::vector<StepRecord>> QueryEngine::StepsOf(const ProcessRecord& process) {
  StoredBatches source(store_, &reader_, process, {.cache = &cache_, .cancelled = &cancelled_});
  absl::StatusOr<std::vector<analysis::StepWindow>> found = analysis::FindSteps(source, step_policy_);
  if (!found.ok()) return found.status();
  std::vector<StepRecord> steps;
  steps.reserve(found->size());
  for (const analysis::StepWindow& w : *found) steps.push_back(ToStepRecord(process.process_id, w));
  return steps;
}

std::shared_ptr<std::mutex> QueryEngine::AnalysisLockOf(uint64_t process_id, bool recent) {
  std::lock_guard lock(analysis_locks_mu_);
  std::shared_ptr<std::mutex>& m = analysis_locks_[{process_id, recent}];
  if (m == nullptr) m = std::make_shared<std::mutex>();
  return m;
}

absl::StatusOr<std::vector<analysis::StepAnalysis>> QueryEngine::BaseAnalyses(
    const ProcessRecord& process, AnalysisBudget::Lease* lease) {
  const std::shared_ptr<std::mutex> analysing = AnalysisLockOf(process.process_id);
  std::lock_guard one_at_a_time(*analysing);
  // Read the version first: a batch stored while we analyse gets a later one and is looked at
  // by the next query.
  const uint64_t version = versions_ != nullptr ? versions_->Version(process.process_id) : 0;
  absl::StatusOr<std::vector<StepRecord>> steps = StepsOf(process);
  if (!steps.ok()) return steps.status();
  return AnalyseStepsOf(process, *steps, {.cache = &cache_, .version = version}, lease);
}

absl::StatusOr<std::vector<analysis::StepAnalysis>> QueryEngine::AnalyseStepsOf(
    const ProcessRecord& process, const std::vector<StepRecord>& steps, const StepsToAnalyse& how,
    AnalysisBudget::Lease* lease) {
  CachedAnalyses previous;
  uint64_t copied_bytes = 0;
  // A stretch is looked up only for steps to reuse: the same data may be asked for another one.
  std::optional<std::vector<analysis::StepAnalysis>> cached = how.cache->Find(
      process, how.stretch ? std::numeric_limits<size_t>::max() : steps.size(), &previous,
      &copied_bytes);
  // A copy of the cached analyses (or of the entry to reuse steps from) is this query's now.
  if (absl::Status st = lease->Add(copied_bytes); !st.ok()) return st;
  if (cached.has_value()) return *std::move(cached);
  const uint64_t reused_step_bytes =
      previous.steps.empty() ? 0 : previous.bytes / previous.steps.size();
  // Steps that end before everything stored since the cached analyses keep them.
  const int64_t changed_from = versions_ != nullptr && !previous.steps.empty()
                                   ? versions_->EarliestSince(process.process_id, previous.version)
                                   : std::numeric_limits<int64_t>::min();
  std::map<int64_t, const analysis::StepAnalysis*> reusable;
  for (const analysis::StepAnalysis& a : previous.steps) {
    if (a.report.step().end_ns() < changed_from) reusable[a.report.step().number()] = &a;
  }
  const auto loss_note = LossNotesFor(store_, process, steps);
  std::vector<analysis::StepWindow> windows;
  windows.reserve(steps.size());
  for (const StepRecord& s : steps) windows.push_back(ToStepWindow(s));
  analysis::ProcessAnalysisHooks hooks;
  hooks.stretch_from = how.stretch_from;
  hooks.proceed = [this] {
    return cancelled_.load() ? absl::CancelledError("gpuspyd is shutting down") : absl::OkStatus();
  };
  hooks.loss_note = [&](const analysis::StepWindow& w) {
    return loss_note(ToStepRecord(process.process_id, w));
  };
  hooks.reuse = [&](const analysis::StepWindow& w) -> absl::StatusOr<analysis::ProcessAnalysisHooks::Reused> {
    auto kept = reusable.find(w.number);
    if (kept == reusable.end() || kept->second->report.step().start_ns() != w.start_ns ||
        kept->second->report.step().end_ns() != w.end_ns) {
      return analysis::ProcessAnalysisHooks::Reused{};
    }
    if (absl::Status st = lease->Add(reused_step_bytes); !st.ok()) return st;
    return analysis::ProcessAnalysisHooks::Reused{kept->second, previous.window_notes[w.number]};
  };
  hooks.keep = [&](const analysis::StepAnalysis& a) { return lease->Add(EstimatedBytes(a)); };
  StoredBatches source(store_, &reader_, process, {.cache = &cache_, .lease = lease, .cancelled = &cancelled_});
  absl::StatusOr<analysis::ProcessAnalysis> analysed =
      analysis::AnalyzeSteps(source, windows, process.process_id, hooks);
  if (!analysed.ok()) return analysed.status();
  steps_analysed_ += analysed->steps_analysed;
  CachedAnalyses entry{process.max_sequence, process.batch_count, steps.size(), analysed->steps,
                       how.version, std::move(analysed->window_notes)};
  how.cache->Put(process.process_id, std::move(entry));
  return std::move(analysed->steps);
}

absl::StatusOr<std::map<uint64_t, std::vector<analysis::StepAnalysis>>> QueryEngine::AnalyzeJob(
    const std::vector<ProcessRecord>& processes, AnalysisBudget::Lease* lease) {
  std::map<uint64_t, std::vector<analysis::StepAnalysis>> out;
  for (const ProcessRecord& p : processes) {
    absl::StatusOr<std::vector<analysis::StepAnalysis>> base = BaseAnalyses(p, lease);
    if (!base.ok()) return base.status();
    out[p.process_id] = std::move(*base);
  }
  analysis::AnalyzeJobSteps(JobIdOf(processes), JobProcesses(processes), &out);
  ++jobs_analysed_;
  return out;
}

bool QueryEngine::WholeJobCached(const std::vector<ProcessRecord>& processes) const {
  return std::all_of(processes.begin(), processes.end(),
                     [&](const ProcessRecord& p) { return cache_.IsCurrent(p); });
}

absl::StatusOr<bool> QueryEngine::WarmWholeJob(const std::string& job_id) {
  absl::StatusOr<std::vector<ProcessRecord>> processes = ProcessesOf(job_id, 0);
  if (!processes.ok()) return processes.status();
  uint64_t events = 0;
  for (const ProcessRecord& p : *processes) {
    if (connections_->IsConnected(p.process_id)) return false;
    events += p.event_count;
  }
  if (events < whole_job_on_the_spot_events_) return true;
  AnalysisBudget::Lease lease(&budget_);
  absl::StatusOr<std::shared_ptr<const FinishedJobReports::Entry>> reports = FinishedReportsOf(*processes, &lease);
  if (!reports.ok()) return reports.status();
  return true;
}

absl::StatusOr<std::shared_ptr<const FinishedJobReports::Entry>> QueryEngine::FinishedReportsOf(
    const std::vector<ProcessRecord>& processes, AnalysisBudget::Lease* lease, bool* made) {
  const std::string job = JobIdOf(processes);
  if (made != nullptr) *made = false;
  if (std::shared_ptr<const FinishedJobReports::Entry> kept = finished_.Find(job, processes)) return kept;
  if (made != nullptr) *made = true;
  absl::StatusOr<std::map<uint64_t, std::vector<analysis::StepAnalysis>>> whole = AnalyzeJob(processes, lease);
  if (!whole.ok()) return whole.status();
  return finished_.Put(job, processes, ReportsOf(*std::move(whole)));
}

absl::StatusOr<v1::GetStepReportResponse> QueryEngine::GetStepReport(
    const v1::GetStepReportRequest& request) {
  AnalysisBudget::Lease lease(&budget_);
  return StepReports(request, &lease);
}

absl::StatusOr<v1::GetStepReportResponse> QueryEngine::StepReports(
    const v1::GetStepReportRequest& request, AnalysisBudget::Lease* lease) {
  absl::StatusOr<std::vector<ProcessRecord>> processes = ProcessesOf(request.job_id(), 0);
  if (!processes.ok()) return processes.status();
  if (request.process_id() != 0 &&
      std::none_of(processes->begin(), processes->end(),
                   [&](const ProcessRecord& p) { return p.process_id == request.process_id(); })) {
    return absl::NotFoundError(
        absl::StrCat("job '", request.job_id(), "' has no process ", request.process_id()));
  }
  // Cross-rank findings need every rank of the job, even when one process is asked for. A few
  // steps of a live job: only their stretch (issue 34: re-analysing a job of thousands of steps
  // per query took 15-35 s under unpaced producers).
  std::optional<std::map<uint64_t, std::vector<analysis::StepAnalysis>>> job;
  const bool live = std::any_of(processes->begin(), processes->end(), [&](const ProcessRecord& p) {
    return connections_->IsConnected(p.process_id);
  });
  // A large finished job whose whole analysis is not cached yet (it just ended) is answered from
  // its recent stretch too, the answer it had a moment before while live, and analysed whole in
  // the background (AnalysisWarmer, WarmWholeJob): a --last 1 taking the whole job on the spot
  // took 98 s for 40 M events (issue 34 item 9). Once cached, reports are the whole job's.
  uint64_t events = 0;
  for (const ProcessRecord& p : *processes) events += p.event_count;
  // A finished job's reports are kept once made (FinishedReportsOf): ready as well.
  const bool whole_ready =
      WholeJobCached(*processes) || (!live && finished_.Find(request.job_id(), *processes) != nullptr);
  const bool whole_not_ready = events >= whole_job_on_the_spot_events_ && !whole_ready;
  if ((live || whole_not_ready) && !request.all()) {
    absl::StatusOr<std::optional<std::map<uint64_t, std::vector<analysis::StepAnalysis>>>> recent =
        AnalyzeRecentSteps(request, *processes, lease);
    if (!recent.ok()) return recent.status();
    job = std::move(*recent);
  }
  v1::GetStepReportResponse out;
  if (!job.has_value() && !live) {
    bool made = false;
    absl::StatusOr<std::shared_ptr<const FinishedJobReports::Entry>> finished =
        FinishedReportsOf(*processes, lease, &made);
    if (!finished.ok()) return finished.status();
    const FinishedJobReports::Entry& entry = **finished;
    ForWantedReports(entry.reports, request, [&](const v1::StepReport& r) { *out.add_reports() = r; });
    // The copies are this query's (estimated as their share of the kept reports). When it made
    // the reports, the lease holds the whole job's analyses already, more than the copies.
    if (!made && entry.report_count > 0) {
      const uint64_t copied = entry.bytes / entry.report_count * static_cast<uint64_t>(out.reports_size());
      if (absl::Status st = lease->Add(copied); !st.ok()) return st;
    }
  } else {
    if (!job.has_value()) {
      absl::StatusOr<std::map<uint64_t, std::vector<analysis::StepAnalysis>>> whole =
          AnalyzeJob(*processes, lease);
      if (!whole.ok()) return whole.status();
      job = std::move(*whole);
    }
    FinishedJobReports::Reports reports = ReportsOf(*std::move(job));
    ForWantedReports(reports, request, [&](v1::StepReport& r) { *out.add_reports() = std::move(r); });
  }
  if (out.reports().empty() && !request.all() && request.last() == 0) {
    return absl::NotFoundError(
        absl::StrCat("job '", request.job_id(), "' has no step ", request.step()));
  }
  return out;
}

absl::StatusOr<v1::GetJobSummaryResponse> QueryEngine::GetJobSummary(
    const v1::GetJobSummaryRequest& request) {
  absl::StatusOr<std::vector<ProcessRecord>> processes = ProcessesOf(request.job_id(), 0);
  if (!processes.ok()) return processes.status();
  v1::GetStepReportRequest all;
  all.set_job_id(request.job_id());
  all.set_all(true);
  // The reports stay charged while the summary is made of them.
  AnalysisBudget::Lease lease(&budget_);
  absl::StatusOr<v1::GetStepReportResponse> reports = StepReports(all, &lease);
  if (!reports.ok()) return reports.status();
  // Moved, not copied: a job's reports are the largest thing a summary holds.
  std::vector<v1::StepReport> steps(std::make_move_iterator(reports->mutable_reports()->begin()),
                                    std::make_move_iterator(reports->mutable_reports()->end()));
  v1::GetJobSummaryResponse out;
  *out.mutable_summary() =
      analysis::SummarizeAnalyzedJob(request.job_id(), steps, JobProcesses(*processes));
  return out;
}

absl::StatusOr<SelectedEvents> QueryEngine::ReadEvents(const v1::GetEventsRequest& request) {
  if (request.to_ns() < request.from_ns()) {
    return absl::InvalidArgumentError("to_ns is before from_ns");
  }
  absl::StatusOr<std::vector<ProcessRecord>> processes =
      ProcessesOf(request.job_id(), request.process_id());
  if (!processes.ok()) return processes.status();
  const uint32_t limit = request.limit() == 0 ? kDefaultEventLimit
                                              : std::min(request.limit(), kMaxEventLimit);
  SelectedEvents out;
  uint64_t budget = limit;
  for (const ProcessRecord& p : *processes) {
    absl::StatusOr<WindowEvents> window =
        reader_.Read(p.process_id, request.from_ns(), request.to_ns());
    if (!window.ok()) return window.status();
    ProcessWindowEvents& selected = out.processes.emplace_back();
    selected.process_id = p.process_id;
    selected.window.dictionary = window->dictionary;
    selected.window.undecodable_batches = window->undecodable_batches;
    // The stored batches overlapping the window hold events outside it too.
    const Selection s = SelectEvents(window->events, request.from_ns(), request.to_ns(), budget,
                                     &selected.window.events);
    budget -= s.events;
    if (s.truncated) {
      out.truncated = true;
      break;
    }
  }
  return out;
}

absl::StatusOr<v1::GetEventsResponse> QueryEngine::GetEvents(const v1::GetEventsRequest& request) {
  if (request.to_ns() < request.from_ns()) {
    return absl::InvalidArgumentError("to_ns is before from_ns");
  }
  absl::StatusOr<std::vector<ProcessRecord>> processes =
      ProcessesOf(request.job_id(), request.process_id());
  if (!processes.ok()) return processes.status();
  return ReadEventPage(&reader_, *std::move(processes), request);
}

v1::GetStatsResponse QueryEngine::GetStats() {
  v1::GetStatsResponse out;
  counters_->FillProto(out.mutable_stats());
  const StoreStats s = store_->Stats();
  out.mutable_stats()->set_corrupt_records(s.corrupt_records);
  out.mutable_stats()->set_segments_evicted(s.segments_evicted);
  out.mutable_stats()->set_storage_bytes(s.bytes_on_disk);
  out.mutable_stats()->set_segments_quarantined(s.segments_quarantined);
  out.mutable_stats()->set_records_lost(s.records_lost);
  out.mutable_stats()->set_analysis_cache_bytes(cache_bytes());
  out.mutable_stats()->set_analysis_cache_budget_bytes(cache_.budget());
  out.mutable_stats()->set_analysis_cache_evictions(cache_evictions());
  out.mutable_stats()->set_analysis_in_flight_bytes(budget_.in_flight_bytes());
  out.mutable_stats()->set_analysis_queries_refused(budget_.refusals());
  if (stats_source_) stats_source_(out.mutable_stats());
  return out;
}

}  // namespace gpuspy::collector
