// What gpuspyd exposes to Prometheus at GET /metrics: the collector's own health (ingest, storage,
// connected processes, drops) and, per recently active job, the state of its training (last step
// time, GPU busy, primary bottleneck, time lost per bottleneck) and, for multi-rank jobs, each
// rank's wait in collectives and how often it was the straggler.
//
// The training job is the `gpuspy_job` label (Prometheus keeps `job` for the scrape job).
// Label cardinality is bounded: job labels only for the kMaxJobs most recently active jobs
// (active = a live process, or data within kJobWindow), bottleneck labels only from the fixed set
// of detectors, process state from a fixed set; rank labels only for multi-rank jobs and at most
// kMaxRanksPerJob of them (rank_metrics.h); no pid or host labels.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "collector/query/query_engine.h"

namespace gpuspy::collector {

inline constexpr size_t kMaxJobs = 50;
inline constexpr absl::Duration kJobWindow = absl::Hours(1);

// Renders the exposition text. Per-job figures come from the last step of each process; per-rank
// ones from the job summary.
std::string CollectorMetrics(QueryEngine* engine);

}  // namespace gpuspy::collector
