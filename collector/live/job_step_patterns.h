// Which pattern finds a job's NVTX steps: the job's own (`gpuspy jobs set-step-pattern`, `gpuspy
// import --step-pattern`; Store::GetJobStepPattern), else gpuspyd's --step-pattern. Ingest asks
// for every batch it indexes, the Query service when a job's pattern changes; one object in
// gpuspyd serves both, so a change is seen by the next batch. Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "analysis/step_segmenter.h"
#include "collector/storage/store.h"

namespace gpuspy::collector {

class JobStepPatterns {
 public:
  JobStepPatterns(Store* store, std::string default_pattern)
      : store_(store), default_pattern_(std::move(default_pattern)) {}

  // The segmenter for `job_id`'s steps (looked up once, then cached until Set or Forget).
  absl::StatusOr<std::shared_ptr<const analysis::StepSegmenter>> For(const std::string& job_id);
  // Stores `pattern` as the job's own ("" removes it: the default applies again). Checked first
  // (analysis::CheckStepPattern).
  absl::Status Set(const std::string& job_id, const std::string& pattern);
  // The job's id changed (RenameJob carries the pattern): both names are looked up afresh.
  void Forget(const std::string& job_id);
  const std::string& default_pattern() const { return default_pattern_; }

 private:
  Store* store_;
  const std::string default_pattern_;
  std::mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const analysis::StepSegmenter>> by_job_;  // mu_
};

}  // namespace gpuspy::collector
