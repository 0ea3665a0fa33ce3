#include "viewer/cli/rank_select.h"

#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpuspy::cli {
namespace {

// "0-3, 5, 7-8": a thousand ranks stay one short line.
std::string Ranges(const std::set<int32_t>& ranks) {
  std::vector<std::string> parts;
  for (auto it = ranks.begin(); it != ranks.end();) {
    const int32_t first = *it;
    int32_t last = first;
    for (++it; it != ranks.end() && *it == last + 1; ++it) last = *it;
    parts.push_back(first == last ? std::to_string(first) : absl::StrCat(first, "-", last));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace

absl::StatusOr<uint64_t> ProcessOfRank(const v1::ListJobsResponse& jobs, const std::string& job,
                                       int32_t rank) {
  const v1::ProcessInfo* found = nullptr;
  std::set<int32_t> ranks;
  bool known = false;
  for (const v1::JobInfo& j : jobs.jobs()) {
    if (j.job_id() != job) continue;
    known = true;
    for (const v1::ProcessInfo& p : j.processes()) {
      if (p.identity().rank() >= 0) ranks.insert(p.identity().rank());
      if (p.identity().rank() != rank) continue;
      if (found == nullptr || p.last_seen_unix_ns() > found->last_seen_unix_ns()) found = &p;
    }
  }
  if (!known) return absl::NotFoundError(absl::StrCat("no job '", job, "'"));
  if (found != nullptr) return found->process_id();
  if (ranks.empty()) {
    return absl::NotFoundError(
        absl::StrCat("job '", job, "' has no rank ", rank, ": its processes reported no rank"));
  }
  return absl::NotFoundError(absl::StrCat("job '", job, "' has no rank ", rank, " (its ranks: ",
                                          Ranges(ranks), ")"));
}

}  // namespace gpuspy::cli
