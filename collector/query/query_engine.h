// Answers gpuspy.v1.Query requests from storage + analysis. Thread-safe; the gRPC and HTTP
// front ends both delegate here.
#pragma once

#include <atomic>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "analysis/memory_usage.h"
#include "analysis/step_finder.h"
#include "analysis/step_series.h"
#include "collector/live/connection_registry.h"
#include "collector/live/job_step_patterns.h"
#include "collector/live/memory_totals.h"
#include "collector/live/ingest_counters.h"
#include "collector/live/overload_ledger.h"
#include "collector/query/analysis_budget.h"
#include "collector/query/analysis_cache.h"
#include "collector/query/event_reader.h"
#include "collector/query/finished_job_reports.h"
#include "collector/query/job_admin.h"
#include "collector/storage/data_versions.h"
#include "collector/storage/store.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::collector {

// ReadEvents returns at most this many events when the request sets no limit, and at most
// kMaxEventLimit (GetEvents pages: event_pages.h).
inline constexpr uint32_t kDefaultEventLimit = 100'000;
inline constexpr uint32_t kMaxEventLimit = 5'000'000;

class QueryEngine {
 public:
  // `versions` (optional) says which stretch of each process's data changed since a cached
  // analysis; without it any new batch re-analyses every step of the process.
  QueryEngine(Store* store, DictionaryCache* dictionaries, const IngestCounters* counters,
              const ConnectionRegistry* connections, const DataVersions* versions = nullptr)
      : store_(store), reader_(store, dictionaries), counters_(counters),
        connections_(connections), versions_(versions) {
    cache_.set_in_flight(budget_.in_flight_counter());
    recent_cache_.set_in_flight(budget_.in_flight_counter());
  }

  // Refusals per process under overload, shown in the process listing (optional).
  void set_overload_ledger(const OverloadLedger* ledger) { overload_ = ledger; }
  // Adds figures kept elsewhere (the node's forwarding) to GetStats. Set before serving.
  void set_stats_source(std::function<void(v1::CollectorStats*)> source) {
    stats_source_ = std::move(source);
  }

  absl::StatusOr<v1::ListJobsResponse> ListJobs();
  absl::StatusOr<v1::ListStepsResponse> ListSteps(const v1::ListStepsRequest& request);
  absl::StatusOr<v1::GetStepReportResponse> GetStepReport(const v1::GetStepReportRequest& request);
  absl::StatusOr<v1::GetJobSummaryResponse> GetJobSummary(const v1::GetJobSummaryRequest& request);
  // One page of events (event_pages.h): at most 100,000 and ~3 MiB, with a cursor to the next.
  absl::StatusOr<v1::GetEventsResponse> GetEvents(const v1::GetEventsRequest& request);
  // One step of one process laid out for the web viewer's timeline, with its idle time by cause
  // (step_timeline_query.cc). InvalidArgument without a process; NotFound for an unknown job,
  // process or step.
  absl::StatusOr<v1::GetStepTimelineResponse> GetStepTimeline(const v1::GetStepTimelineRequest& request);
  v1::GetStatsResponse GetStats();
  // One side of `gpuspy diff` (run_profile_query.cc).
  absl::StatusOr<v1::GetRunProfileResponse> GetRunProfile(const v1::GetRunProfileRequest& request);
  // Both sides' profiles, compared by analysis::DiffRuns. An error names the side ("a: ...").
  absl::StatusOr<v1::DiffRunsResponse> DiffRuns(const v1::DiffRunsRequest& request);
  // Finished jobs' step reports kept (finished_job_reports.h), estimated bytes.
  uint64_t finished_reports_bytes() const { return finished_.bytes(); }
  // Per-step reports computed so far (not served from the cache): for tests and benchmarks.
  uint64_t steps_analysed() const { return steps_analysed_.load(); }
  // Job-level passes (cross-step and cross-rank) over every step of a job run so far.
  uint64_t jobs_analysed() const { return jobs_analysed_.load(); }
  // Batches read to measure the memory before a recent stretch (MemoryBefore), and stretches
  // whose memory before came from ingest's totals instead: tests check the re-decode is gone.
  uint64_t memory_prefix_batches_read() const { return memory_prefix_batches_read_.load(); }
  uint64_t memory_totals_used() const { return memory_totals_used_.load(); }
  // Bounds the memory analysis may hold (estimated): the per-process cache and the analyses of
  // queries in progress together (analysis_budget.h). Cached processes queried least recently
  // are dropped first (their next query analyses them again); a query that would take the
  // queries in progress past it is refused with RESOURCE_EXHAUSTED (unless it is the only one).
  // Set before serving; 0 = unbounded.
  void set_cache_budget(uint64_t bytes) {
    cache_.set_budget(bytes);
    recent_cache_.set_budget(bytes / 4);
    finished_.set_budget(bytes / 4);
    budget_.set_budget(bytes);
  }
  // The budget's state (queries in progress, refusals); tests take leases from it.
  AnalysisBudget* analysis_budget() { return &budget_; }
  uint64_t cache_bytes() const { return cache_.bytes(); }
  uint64_t cache_evictions() const { return cache_.evictions(); }
  // gpuspyd is stopping: analyses in progress end after their current step (CANCELLED) and new
  // ones do not start, so a stop never waits for a large backlog to be analysed. For good.
  void Cancel() { cancelled_.store(true); }
  // Deleting and renaming jobs, finding imports (job_admin.h): the same store, the same liveness.
  JobAdmin* admin() { return &admin_; }
  // A job's own step pattern (job_step_patterns.h): stored, the job's steps found again with it
  // from its stored batches, what was cached for its processes dropped (job_step_pattern.cc).
  // FailedPrecondition without set_job_patterns.
  absl::StatusOr<v1::SetStepPatternResponse> SetStepPattern(const v1::SetStepPatternRequest& request);
  // Set before serving: the same object ingest indexes steps with.
  void set_job_patterns(JobStepPatterns* patterns) {
    patterns_ = patterns;
    admin_.set_job_patterns(patterns);
  }
  // Set before serving: the memory totals ingest keeps (memory_totals.h). Without them a recent
  // stretch's memory levels are made absolute by reading the process's earlier batches.
  void set_memory_totals(MemoryTotals* totals) {
    memory_totals_ = totals;
    admin_.set_memory_totals(totals);
  }
  // The background half of a report of a large finished job: every step of every process of
  // `job_id` analysed and its reports kept (FinishedReportsOf), so that later --step/--last
  // reports are the exact whole job's. False while a process of the job is still connected
  // (nothing to do yet); OK when done or not needed (small job, already kept).
  absl::StatusOr<bool> WarmWholeJob(const std::string& job_id);
  // Tests: the job size from which a finished job's --step/--last wait for WarmWholeJob.
  void set_whole_job_on_the_spot_events(uint64_t events) { whole_job_on_the_spot_events_ = events; }

 private:
  // The job's processes, or the one asked for; NotFound when the job (or process) is unknown.
  absl::StatusOr<std::vector<ProcessRecord>> ProcessesOf(const std::string& job_id,
                                                         uint64_t process_id);
  void FillProcessInfo(const ProcessRecord& record, v1::ProcessInfo* out) const;
  // A window's events (the earliest `limit` by start time), before expansion into messages, all
  // in memory: for GetStepTimeline, which reads one step's columns (expanding a 100k-event step
  // into v1::Events only to read them back cost most of the timeline's time).
  absl::StatusOr<SelectedEvents> ReadEvents(const v1::GetEventsRequest& request);
  // The process's steps (analysis::FindSteps over its stored batches): its NVTX steps when it
  // has any, else steps detected from the kernel sequence's period, else fixed windows. Detected
  // steps are cached until new batches arrive.
  absl::StatusOr<std::vector<StepRecord>> StepsOf(const ProcessRecord& process);
  // Per-step reports of one process before cross-step analysis; cached until new batches arrive.
  // GetStepReport, charging what it builds to `lease` (GetJobSummary keeps its reports charged
  // while it summarises them).
  absl::StatusOr<v1::GetStepReportResponse> StepReports(const v1::GetStepReportRequest& request,
                                                        AnalysisBudget::Lease* lease);
  // What they hold is charged to `lease` (the query's share of the analysis budget).
  absl::StatusOr<std::vector<analysis::StepAnalysis>> BaseAnalyses(const ProcessRecord& process,
                                                                   AnalysisBudget::Lease* lease);
  // How AnalyseStepsOf analyses: into which cache (whose entry for the process it reuses steps
  // from), for which data version, and whether the steps are a later stretch of the process's
  // (then the stretch before the first begins at `stretch_from`, the end of the step before it).
  struct StepsToAnalyse {
    AnalysisCache* cache = nullptr;
    uint64_t version = 0;
    bool stretch = false;
    int64_t stretch_from = std::numeric_limits<int64_t>::min();
  };
  // `steps` of `process` analysed, reusing the cached analyses of those whose data did not change
  // and caching the result. The caller holds the process's analysis lock for that cache.
  absl::StatusOr<std::vector<analysis::StepAnalysis>> AnalyseStepsOf(
      const ProcessRecord& process, const std::vector<StepRecord>& steps, const StepsToAnalyse& how,
      AnalysisBudget::Lease* lease);
  // The report of a few recent steps of a live job (recent_step_reports.cc): only the steps asked
  // for and kRecentContextSteps before them, per process, are analysed (each once, then reused
  // while its data stays), and the cross-step and cross-rank passes run over that stretch only.
  // `last K` is the last K steps every process has reached.
  // nullopt when the stretch is every step of every process (then the whole job is no more work
  // and its analyses are exact, and cached for the next query).
  absl::StatusOr<std::optional<std::map<uint64_t, std::vector<analysis::StepAnalysis>>>>
  AnalyzeRecentSteps(const v1::GetStepReportRequest& request,
                     const std::vector<ProcessRecord>& processes, AnalysisBudget::Lease* lease);
  // Device memory in everything `process` did before `to_ns` (a recent stretch's first step's
  // `before`, so that its levels are absolute): extended from the last call's when the data
  // before that did not change since (only the batches in between are read), else read whole.
  // `steps`: the process's, by number (where to cut the reads).
  absl::StatusOr<analysis::WindowMemory> MemoryBefore(const ProcessRecord& process,
                                                      const std::vector<StepRecord>& steps, int64_t to_ns,
                                                      uint64_t version, AnalysisBudget::Lease* lease);
  // Whether every process's whole-job analyses are cached for its batches as they are now.
  bool WholeJobCached(const std::vector<ProcessRecord>& processes) const;
  // A finished job this large (all its processes' events) is not analysed whole on the spot for
  // --step/--last: that took 98 s for 40 M events here (the first report after the producers
  // ended, bench/results/report-latency-unpaced-2026-11-28.md). Below it, the whole job is about
  // a second of analysis on a loaded 2-core machine (~0.4 M events/s).
  static constexpr uint64_t kWholeJobOnTheSpotEvents = 500'000;
  uint64_t whole_job_on_the_spot_events_ = kWholeJobOnTheSpotEvents;
  // Every step of every process of `processes` with cross-step and cross-rank findings applied.
  absl::StatusOr<std::map<uint64_t, std::vector<analysis::StepAnalysis>>> AnalyzeJob(
      const std::vector<ProcessRecord>& processes, AnalysisBudget::Lease* lease);
  // The step reports of a finished job (no process connected): kept after the first time
  // (finished_job_reports.h), so that later reports are a lookup. `*made` (optional): whether
  // this call made them (then `lease` holds the whole job's analyses).
  absl::StatusOr<std::shared_ptr<const FinishedJobReports::Entry>> FinishedReportsOf(
      const std::vector<ProcessRecord>& processes, AnalysisBudget::Lease* lease, bool* made = nullptr);

  // One analysis of a process at a time: a query (or the warmer) that finds another one
  // analysing the same process waits for it and then reuses what it cached, instead of doing the
  // same work alongside it (which, on a busy machine, made both slow: the first queries of each
  // live job took 2-3 s, bench/results/query-memory-2026-11-27.md).
  // Recent-step reports take the process's other lock (`recent`): they never wait behind the
  // analysis of a whole live job.
  std::shared_ptr<std::mutex> AnalysisLockOf(uint64_t process_id, bool recent = false);
  std::mutex analysis_locks_mu_;
  std::map<std::pair<uint64_t, bool>, std::shared_ptr<std::mutex>> analysis_locks_;

  std::atomic<bool> cancelled_{false};
  // Stored processes keep an NVTX step index (ingest's), so only its fallback window is read.
  const analysis::StepPolicy step_policy_;
  std::function<void(v1::CollectorStats*)> stats_source_;
  AnalysisCache cache_;
  // The analyses of each process's most recent stretch (AnalyzeRecentSteps), apart from cache_'s
  // of all its steps, so that neither kind of query throws the other's away.
  AnalysisCache recent_cache_;
  FinishedJobReports finished_;
  struct MemoryPrefix {
    int64_t up_to_ns = 0;
    uint64_t version = 0;  // DataVersions version it reflects
    analysis::WindowMemory memory;
  };
  std::mutex prefixes_mu_;
  std::map<uint64_t, MemoryPrefix> memory_prefixes_;  // by process
  AnalysisBudget budget_{&cache_};  // after cache_

  Store* store_;
  EventReader reader_;
  const IngestCounters* counters_;
  const ConnectionRegistry* connections_;
  const DataVersions* versions_;
  const OverloadLedger* overload_ = nullptr;
  std::atomic<uint64_t> steps_analysed_{0};
  std::atomic<uint64_t> jobs_analysed_{0};
  std::atomic<uint64_t> memory_prefix_batches_read_{0};
  std::atomic<uint64_t> memory_totals_used_{0};
  JobStepPatterns* patterns_ = nullptr;
  const MemoryTotals* memory_totals_ = nullptr;
  JobAdmin admin_{store_, connections_};  // after store_ and connections_
};

}  // namespace gpuspy::collector
