// Per-rank series of multi-rank jobs in /metrics, from their job summaries (the cross-rank
// analysis, JobSummary.ranks):
//   gpuspy_rank_comm_wait_seconds{gpuspy_job,rank}  median over steady steps of the rank's time in
//                                                   collectives waiting for the last rank to arrive
//   gpuspy_rank_straggler_steps{gpuspy_job,rank}    steady steps in which the other ranks waited
//                                                   for this one
// Rank labels are bounded: at most kMaxRanksPerJob per job, the ranks the others waited for
// first, then those that waited longest (a 1000-rank job keeps its stragglers and its victims).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "collector/metrics/prometheus_text.h"
#include "gpuspy/v1/report.pb.h"

namespace gpuspy::collector {

inline constexpr size_t kMaxRanksPerJob = 64;

// Writes both families (their HELP/TYPE lines even with no job) and a sample per rank.
void WriteRankMetrics(const std::vector<v1::JobSummary>& jobs, PrometheusText& m);

}  // namespace gpuspy::collector
