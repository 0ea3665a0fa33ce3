// Analyses new steps in the background, so the first query after data arrives (a user's
// `gpuspy report`, the viewer, a Prometheus scrape) finds them ready instead of analysing the whole
// backlog on the spot (4 s for 10 M events stored, bench/scaling.sh). It asks QueryEngine for each
// recently active job's last step: that fills the engine's per-process analysis cache; once a
// large job has ended, every step of it (the exact whole-job reports that --step/--last of a
// finished job serve once they are ready).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "absl/time/time.h"
#include "collector/query/query_engine.h"

namespace gpuspy::collector {

class AnalysisWarmer {
 public:
  AnalysisWarmer(QueryEngine* engine, absl::Duration period = absl::Seconds(1));
  ~AnalysisWarmer();
  void Stop();
  uint64_t jobs_warmed() const;

 private:
  void Run();
  void Round();

  QueryEngine* engine_;
  const absl::Duration period_;
  std::map<std::string, uint64_t> seen_events_;  // job -> event count at its last warm-up
  // job -> event count at its last whole-job warm-up (QueryEngine::WarmWholeJob): tried once
  // per count, done or failed, so a job too large for the analysis budget is not retried forever.
  std::map<std::string, uint64_t> whole_events_;
  uint64_t jobs_warmed_ = 0;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpuspy::collector
