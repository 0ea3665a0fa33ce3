#include "collector/metrics/collector_metrics.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "absl/time/clock.h"
#include "collector/metrics/prometheus_text.h"
#include "collector/metrics/rank_metrics.h"
#include "analysis/detector_names.h"
#include "analysis/stats.h"

namespace gpuspy::collector {

using analysis::DetectorName;

namespace {

double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

struct JobFigures {
  std::string job;
  std::vector<double> step_seconds, gpu_busy;
  std::map<std::string, int> primary;          // bottleneck -> processes whose last step has it
  std::map<std::string, double> lost_seconds;  // detector -> summed over processes' last steps
  int reports = 0;
};

// Two or more processes that report distinct ranks: a job with a cross-rank picture.
bool MultiRank(const v1::JobInfo& j) {
  std::set<int32_t> ranks;
  for (const v1::ProcessInfo& p : j.processes()) {
    if (p.identity().rank() >= 0) ranks.insert(p.identity().rank());
  }
  return ranks.size() > 1;
}

void WriteCollector(const v1::CollectorStats& s, PrometheusText& m) {
  m.Family("gpuspy_ingest_batches_total", "counter", "Batches received, by outcome");
  m.Sample(s.batches_stored(), {{"result", "stored"}});
  m.Sample(s.batches_duplicate(), {{"result", "duplicate"}});
  m.Sample(s.batches_rejected(), {{"result", "rejected"}});
  m.Family("gpuspy_ingest_events_total", "counter", "Events stored");
  m.Sample(s.events_stored());
  m.Family("gpuspy_ingest_bytes_total", "counter", "Wire bytes of stored batches");
  m.Sample(s.bytes_stored());
  m.Family("gpuspy_ingest_sequence_gaps_total", "counter", "Batches producers numbered but never delivered");
  m.Sample(s.sequence_gaps());
  m.Family("gpuspy_ingest_streams_open", "gauge", "Open ingest streams");
  m.Sample(s.streams_open());
  m.Family("gpuspy_ingest_streams_aborted_total", "counter", "Ingest streams that ended abnormally");
  m.Sample(s.streams_aborted());
  m.Family("gpuspy_ingest_refused_total", "counter",
           "Producers turned away while overloaded (they keep the data and retry), by reason");
  m.Sample(s.ingest_streams_refused(), {{"reason", "streams"}});
  m.Sample(s.ingest_batches_refused(), {{"reason", "memory"}});
  m.Family("gpuspy_ingest_deferred_total", "counter",
           "Batches that waited for room in the ingest memory budget before being taken");
  m.Sample(s.ingest_batches_deferred());
  m.Family("gpuspy_ingest_memory_bytes", "gauge",
           "Ingest memory budget: estimated bytes of batches being decoded and stored");
  m.Sample(s.ingest_bytes_in_flight(), {{"kind", "in_flight"}});
  m.Sample(s.ingest_peak_bytes_in_flight(), {{"kind", "peak"}});
  m.Sample(s.ingest_memory_budget_bytes(), {{"kind", "budget"}});
  m.Family("gpuspy_ingest_streams_max", "gauge", "Ingest streams taken at once (--max-ingest-streams)");
  m.Sample(s.max_ingest_streams());
  m.Family("gpuspy_storage_bytes", "gauge", "Bytes on disk (segments + index)");
  m.Sample(s.storage_bytes());
  m.Family("gpuspy_storage_errors_total", "counter", "Failed storage writes");
  m.Sample(s.storage_errors());
  m.Family("gpuspy_storage_corrupt_records_total", "counter", "Stored records skipped: checksum or decompression failed");
  m.Sample(s.corrupt_records());
  m.Family("gpuspy_storage_segments_evicted_total", "counter", "Segments removed by retention");
  m.Sample(s.segments_evicted());
  m.Family("gpuspy_storage_segments_quarantined_total", "counter",
           "Damaged segment files moved aside (their readable records kept)");
  m.Sample(s.segments_quarantined());
  m.Family("gpuspy_storage_records_lost_total", "counter",
           "Stored batches that could not be read back from damaged segments");
  m.Sample(s.records_lost());
  m.Family("gpuspy_analysis_cache_bytes", "gauge",
           "Per-step analyses kept between queries (estimated), and the bound (--analysis-cache-mb)");
  m.Sample(s.analysis_cache_bytes(), {{"kind", "used"}});
  m.Sample(s.analysis_cache_budget_bytes(), {{"kind", "budget"}});
  m.Family("gpuspy_analysis_cache_evictions_total", "counter",
           "Processes dropped from the analysis cache to stay within its bound");
  m.Sample(s.analysis_cache_evictions());
  m.Family("gpuspy_analysis_in_flight_bytes", "gauge",
           "Analyses held by queries in progress (estimated; with the cache within the bound)");
  m.Sample(s.analysis_in_flight_bytes());
  m.Family("gpuspy_analysis_queries_refused_total", "counter",
           "Queries refused (RESOURCE_EXHAUSTED, HTTP 503): analysis memory past the bound");
  m.Sample(s.analysis_queries_refused());
  if (!s.has_forward()) return;
  const v1::ForwardStats& f = s.forward();
  m.Family("gpuspy_forward_batches_total", "counter",
           "Batches this node sent to its hub, by outcome at the hub");
  m.Sample(f.batches_forwarded() - f.batches_already_at_hub(), {{"result", "stored"}});
  m.Sample(f.batches_already_at_hub(), {{"result", "duplicate"}});
  m.Family("gpuspy_forward_events_total", "counter", "Events this node sent to its hub");
  m.Sample(f.events_forwarded());
  m.Family("gpuspy_forward_lag_batches", "gauge",
           "Batches stored on this node that the hub has not acknowledged yet");
  m.Sample(f.lag_batches());
  m.Family("gpuspy_forward_hub_unreachable_total", "counter",
           "Forwarding rounds cut short because the hub could not be reached");
  m.Sample(f.hub_unreachable());
  m.Family("gpuspy_forward_hub_refusals_total", "counter",
           "Processes an overloaded hub turned away for a while (retried after its hint)");
  m.Sample(f.hub_refusals());
}

}  // namespace

std::string CollectorMetrics(QueryEngine* engine) {
  PrometheusText m;
  WriteCollector(engine->GetStats().stats(), m);

  absl::StatusOr<v1::ListJobsResponse> jobs = engine->ListJobs();
  if (!jobs.ok()) {
    m.Family("gpuspy_up", "gauge", "1 when the collector could read its store");
    m.Sample(0);
    return m.text();
  }
  // Processes by state, drops by where they happened (all jobs: no job label).
  std::map<std::string, int> states = {{"capturing", 0}, {"dormant", 0}, {"disconnected", 0}};
  uint64_t cupti = 0, queue = 0, spill = 0;
  std::vector<const v1::JobInfo*> recent;
  std::map<std::string, uint64_t> refused_by_job;  // of the recent jobs, below
  const int64_t since = absl::ToUnixNanos(absl::Now() - kJobWindow);
  for (const v1::JobInfo& j : jobs->jobs()) {
    bool live = false;
    for (const v1::ProcessInfo& p : j.processes()) {
      ++states[p.state()];
      live |= p.state() != "disconnected";
      cupti += p.loss().cupti_dropped_records();
      queue += p.loss().queue_dropped_events();
      spill += p.loss().spill_dropped_events();
      const v1::OverloadCounters& o = p.overload();
      if (o.streams_refused() + o.batches_refused() > 0) {
        refused_by_job[j.job_id()] += o.streams_refused() + o.batches_refused();
      }
    }
    if (live || j.last_seen_unix_ns() >= since) recent.push_back(&j);
  }
  m.Family("gpuspy_up", "gauge", "1 when the collector could read its store");
  m.Sample(1);
  m.Family("gpuspy_processes", "gauge", "Known processes by state");
  for (const auto& [state, n] : states) m.Sample(n, {{"state", state}});
  m.Family("gpuspy_events_dropped_total", "counter", "Events producers lost, by where (latest counters reported)");
  m.Sample(static_cast<double>(cupti), {{"where", "cupti"}});
  m.Sample(static_cast<double>(queue), {{"where", "queue"}});
  m.Sample(static_cast<double>(spill), {{"where", "spill"}});

  std::sort(recent.begin(), recent.end(), [](const v1::JobInfo* a, const v1::JobInfo* b) {
    return a->last_seen_unix_ns() > b->last_seen_unix_ns();
  });
  if (recent.size() > kMaxJobs) recent.resize(kMaxJobs);

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<JobFigures> figures;
  for (const v1::JobInfo* j : recent) {
    v1::GetStepReportRequest req;
    req.set_job_id(j->job_id());
    req.set_last(1);
    absl::StatusOr<v1::GetStepReportResponse> reports = engine->GetStepReport(req);
    if (!reports.ok()) continue;
    JobFigures f;
    f.job = j->job_id();
    for (const v1::StepReport& r : reports->reports()) {
      const auto& b = r.breakdown();
      if (b.wall_ns() <= 0) continue;
      ++f.reports;
      f.step_seconds.push_back(Seconds(b.wall_ns()));
      f.gpu_busy.push_back(static_cast<double>(b.gpu_busy_ns()) / static_cast<double>(b.wall_ns()));
      const v1::Detector primary =
          r.primary_bottleneck() == v1::DETECTOR_UNSPECIFIED ? v1::none : r.primary_bottleneck();
      ++f.primary[DetectorName(primary)];
      for (const v1::Finding& x : r.findings()) {
        f.lost_seconds[DetectorName(x.detector())] += Seconds(x.lost_ns());
      }
    }
    if (f.reports > 0) figures.push_back(std::move(f));
  }
  // The per-rank series need the whole job's analysis (its steady steps), not only last steps.
  std::vector<v1::JobSummary> rank_jobs;
  for (const v1::JobInfo* j : recent) {
    if (!MultiRank(*j)) continue;
    v1::GetJobSummaryRequest req;
    req.set_job_id(j->job_id());
    absl::StatusOr<v1::GetJobSummaryResponse> summary = engine->GetJobSummary(req);
    if (summary.ok()) rank_jobs.push_back(std::move(*summary->mutable_summary()));
  }
  const double analysis_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  m.Family("gpuspy_job_ingest_refused_total", "counter",
           "Times the job's processes were turned away by an overloaded collector (since it started)");
  // Every recent job, 0 included: a counter that appears only at its first increment makes
  // Prometheus's rate()/increase() miss that increment.
  for (const v1::JobInfo* j : recent) {
    auto it = refused_by_job.find(j->job_id());
    const double refused = it != refused_by_job.end() ? static_cast<double>(it->second) : 0.0;
    m.Sample(refused, {{"gpuspy_job", j->job_id()}});
  }
  m.Family("gpuspy_job_step_seconds", "gauge", "Median over processes of the last step's wall time");
  for (const JobFigures& f : figures) m.Sample(stats::Median(f.step_seconds), {{"gpuspy_job", f.job}});
  m.Family("gpuspy_job_gpu_busy_ratio", "gauge", "Median over processes of the last step's GPU busy fraction");
  for (const JobFigures& f : figures) m.Sample(stats::Median(f.gpu_busy), {{"gpuspy_job", f.job}});
  m.Family("gpuspy_job_primary_bottleneck", "gauge",
           "1 for the primary bottleneck of most processes' last step, 0 for the others seen");
  for (const JobFigures& f : figures) {
    const auto top = std::max_element(f.primary.begin(), f.primary.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    for (const auto& [bottleneck, n] : f.primary) {
      m.Sample(bottleneck == top->first ? 1 : 0, {{"gpuspy_job", f.job}, {"bottleneck", bottleneck}});
    }
  }
  m.Family("gpuspy_job_time_lost_seconds", "gauge",
           "Estimated time lost per step to each bottleneck (mean over processes' last step)");
  for (const JobFigures& f : figures) {
    for (const auto& [detector, s] : f.lost_seconds) {
      m.Sample(s / f.reports, {{"gpuspy_job", f.job}, {"bottleneck", detector}});
    }
  }
  WriteRankMetrics(rank_jobs, m);
  m.Family("gpuspy_metrics_analysis_seconds", "gauge",
           "Time this scrape spent analysing jobs (last steps; whole multi-rank jobs)");
  m.Sample(analysis_s);
  m.Family("gpuspy_metrics_jobs", "gauge", "Jobs with per-job series in this scrape (at most 50)");
  m.Sample(static_cast<double>(figures.size()));
  return m.text();
}

}  // namespace gpuspy::collector
