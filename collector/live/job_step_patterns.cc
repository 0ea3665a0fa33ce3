#include "collector/live/job_step_patterns.h"


namespace gpuspy::collector {

absl::StatusOr<std::shared_ptr<const analysis::StepSegmenter>> JobStepPatterns::For(const std::string& job_id) {
  // The store is asked under the lock, once per job: a Set meanwhile must not be overtaken by
  // the pattern it replaced.
  std::lock_guard lock(mu_);
  if (auto it = by_job_.find(job_id); it != by_job_.end()) return it->second;
  absl::StatusOr<std::string> own = store_->GetJobStepPattern(job_id);
  if (!own.ok()) return own.status();
  auto segmenter = std::make_shared<const analysis::StepSegmenter>(own->empty() ? default_pattern_ : *own);
  by_job_.emplace(job_id, segmenter);
  return segmenter;
}

absl::Status JobStepPatterns::Set(const std::string& job_id, const std::string& pattern) {
  if (!pattern.empty()) {
    if (absl::Status st = analysis::CheckStepPattern(pattern); !st.ok()) return st;
  }
  std::lock_guard lock(mu_);  // held across the write: a For in between must not cache the old one
  if (absl::Status st = store_->SetJobStepPattern(job_id, pattern); !st.ok()) return st;
  by_job_.erase(job_id);
  return absl::OkStatus();
}

void JobStepPatterns::Forget(const std::string& job_id) {
  std::lock_guard lock(mu_);
  by_job_.erase(job_id);
}

}  // namespace gpuspy::collector
