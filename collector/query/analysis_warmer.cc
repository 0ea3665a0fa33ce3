#include "collector/query/analysis_warmer.h"

#include <pthread.h>

namespace gpuspy::collector {

AnalysisWarmer::AnalysisWarmer(QueryEngine* engine, absl::Duration period)
    : engine_(engine), period_(period), thread_([this] { Run(); }) {}

AnalysisWarmer::~AnalysisWarmer() { Stop(); }

void AnalysisWarmer::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t AnalysisWarmer::jobs_warmed() const {
  std::lock_guard lock(mu_);
  return jobs_warmed_;
}

void AnalysisWarmer::Run() {
  pthread_setname_np(pthread_self(), "gpuspy-warm");
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    Round();
    lock.lock();
    cv_.wait_for(lock, absl::ToChronoNanoseconds(period_), [this] { return stopping_; });
  }
}

void AnalysisWarmer::Round() {
  absl::StatusOr<v1::ListJobsResponse> jobs = engine_->ListJobs();
  if (!jobs.ok()) return;
  for (const v1::JobInfo& j : jobs->jobs()) {
    uint64_t& seen = seen_events_[j.job_id()];
    if (j.event_count() != seen) {  // something new since the last warm-up
      v1::GetStepReportRequest req;
      req.set_job_id(j.job_id());
      req.set_last(1);
      if (engine_->GetStepReport(req).ok()) {
        seen = j.event_count();
        std::lock_guard lock(mu_);
        ++jobs_warmed_;
      }
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    uint64_t& whole = whole_events_[j.job_id()];
    if (j.event_count() == whole) continue;
    absl::StatusOr<bool> warmed = engine_->WarmWholeJob(j.job_id());
    if (!warmed.ok() || *warmed) whole = j.event_count();  // false: still live, try next round
    std::lock_guard lock(mu_);
    if (stopping_) return;
  }
}

}  // namespace gpuspy::collector
