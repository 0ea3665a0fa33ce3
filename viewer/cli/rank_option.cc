#include "viewer/cli/rank_option.h"

#include <cstdio>

#include "viewer/cli/query_client.h"
#include "viewer/cli/rank_select.h"

namespace gpuspy::cli {

bool ResolveRank(const GlobalOptions& g, const std::string& job, int32_t rank, uint64_t* process) {
  if (rank < 0) return true;
  QueryClient q(g.collector, g.timeout_s);
  v1::ListJobsResponse jobs;
  if (!q.Call(&v1::Query::Stub::ListJobs, v1::ListJobsRequest(), &jobs)) return false;
  absl::StatusOr<uint64_t> p = ProcessOfRank(jobs, job, rank);
  if (!p.ok()) {
    std::fprintf(stderr, "gpuspy: %s\n", std::string(p.status().message()).c_str());
    return false;
  }
  *process = *p;
  return true;
}

}  // namespace gpuspy::cli
