// `--rank N`: the process of a job that ran as rank N (ProcessIdentity.rank, from the launcher).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::cli {

// The process of `job` whose identity says `rank`. When a rank ran more than once (a restarted
// job), the one seen last. NotFound, with a message naming the ranks the job has, otherwise.
absl::StatusOr<uint64_t> ProcessOfRank(const v1::ListJobsResponse& jobs, const std::string& job,
                                       int32_t rank);

}  // namespace gpuspy::cli
