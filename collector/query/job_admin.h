// Changes to stored jobs, for the Query service's DeleteJob / RenameJob and `gpuspy import`'s
// FindImports: the rules (a live job is not deleted unless forced, nor renamed; a new name must be
// free) in one place for the gRPC and HTTP front ends. Who may call them is collector/auth's part.
#pragma once

#include "absl/status/statusor.h"
#include "collector/live/connection_registry.h"
#include "collector/live/job_step_patterns.h"
#include "collector/live/memory_totals.h"
#include "collector/storage/store.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::collector {

// A FindImports request names at most this many files (a job's ranks; more is not an import).
inline constexpr int kMaxImportHashes = 4096;

class JobAdmin {
 public:
  JobAdmin(Store* store, const ConnectionRegistry* connections) : store_(store), connections_(connections) {}

  absl::StatusOr<v1::FindImportsResponse> FindImports(const v1::FindImportsRequest& request) const;
  // FailedPrecondition while a process of the job (of those named) is connected and not `force`.
  absl::StatusOr<v1::DeleteJobResponse> DeleteJob(const v1::DeleteJobRequest& request);
  // FailedPrecondition while a process of the job is connected: it would say Hello again with
  // the old job id on its next reconnect and split the job in two.
  absl::StatusOr<v1::RenameJobResponse> RenameJob(const v1::RenameJobRequest& request);
  // The step patterns to tell when a job's id changes or the job goes (optional).
  void set_job_patterns(JobStepPatterns* patterns) { patterns_ = patterns; }
  // The memory totals ingest keeps, which forget deleted processes (optional).
  void set_memory_totals(MemoryTotals* totals) { memory_totals_ = totals; }

 private:
  Store* store_;
  const ConnectionRegistry* connections_;
  JobStepPatterns* patterns_ = nullptr;
  MemoryTotals* memory_totals_ = nullptr;
};

}  // namespace gpuspy::collector
