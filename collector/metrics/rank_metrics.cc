#include "collector/metrics/rank_metrics.h"

#include <algorithm>

namespace gpuspy::collector {
namespace {

// The ranks of `summary` that get series, in rank order.
std::vector<const v1::RankSummary*> Shown(const v1::JobSummary& summary) {
  std::vector<const v1::RankSummary*> ranks;
  for (const v1::RankSummary& r : summary.ranks()) {
    if (r.rank() >= 0) ranks.push_back(&r);
  }
  if (ranks.size() > kMaxRanksPerJob) {
    std::stable_sort(ranks.begin(), ranks.end(), [](const auto* a, const auto* b) {
      if (a->straggler_steps() != b->straggler_steps()) return a->straggler_steps() > b->straggler_steps();
      return a->median_wait_ns() > b->median_wait_ns();
    });
    ranks.resize(kMaxRanksPerJob);
  }
  std::sort(ranks.begin(), ranks.end(), [](const auto* a, const auto* b) { return a->rank() < b->rank(); });
  return ranks;
}

}  // namespace

void WriteRankMetrics(const std::vector<v1::JobSummary>& jobs, PrometheusText& m) {
  std::vector<std::vector<const v1::RankSummary*>> shown;
  for (const v1::JobSummary& j : jobs) shown.push_back(Shown(j));
  m.Family("gpuspy_rank_comm_wait_seconds", "gauge",
           "Median over steady steps of a rank's time in collectives waiting for the last rank "
           "(multi-rank jobs)");
  for (size_t i = 0; i < jobs.size(); ++i) {
    for (const v1::RankSummary* r : shown[i]) {
      m.Sample(static_cast<double>(r->median_wait_ns()) / 1e9,
               {{"gpuspy_job", jobs[i].job_id()}, {"rank", std::to_string(r->rank())}});
    }
  }
  m.Family("gpuspy_rank_straggler_steps", "gauge",
           "Steady steps in which the other ranks waited for this rank (multi-rank jobs)");
  for (size_t i = 0; i < jobs.size(); ++i) {
    for (const v1::RankSummary* r : shown[i]) {
      m.Sample(static_cast<double>(r->straggler_steps()),
               {{"gpuspy_job", jobs[i].job_id()}, {"rank", std::to_string(r->rank())}});
    }
  }
}

}  // namespace gpuspy::collector
