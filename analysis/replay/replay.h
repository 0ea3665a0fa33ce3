// Replays a step's dependency graph (step_graph.h), as recorded or with an edit: the step's wall
// time recomputed from the durations and dependencies, so that "what would the step take without
// this cause" is a prediction, not a share of the idle time.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "analysis/intervals.h"
#include "analysis/replay/step_graph.h"

namespace gpuspy::analysis::replay {

// What a fix changes in the step. Edits compose (Merge): "all fixes together" is one replay.
struct StepEdit {
  // Host work that costs nothing, per thread id, in recorded time: the parts of the gaps between
  // CUDA calls that fall inside these intervals are removed.
  std::map<uint32_t, IntervalSet> removed_host;
  // Calls that cost this many ns and wait for nothing ({thread, call} of the graph).
  std::map<std::pair<int, int>, int64_t> call_cost;
  // GPU work that takes this long instead.
  std::map<int, int64_t> op_duration;
  // GPU work moved to a side stream that nothing in the step waits for: it starts at its launch,
  // and neither its stream's later work, nor other streams, nor blocking calls wait for it.
  std::set<int> detached_ops;

  bool empty() const {
    return removed_host.empty() && call_cost.empty() && op_duration.empty() && detached_ops.empty();
  }
  // Both edits at once; where both change the same thing, the larger saving wins.
  void Merge(const StepEdit& other);
  // Host time of `thread_id` removed within [start, end].
  int64_t RemovedWithin(uint32_t thread_id, int64_t start, int64_t end) const;
};

struct ReplayResult {
  bool ok = false;
  std::string error;       // why not, when !ok
  int64_t step_ns = 0;     // the replayed wall time
  int64_t host_end_ns = 0; // where the main thread reaches the window's end
  int64_t gpu_end_ns = 0;  // the step's last GPU work ends (less the recorded spill)
};

// `copies` > 1: the step replayed as that many periods of a steady loop (replay.cc), step_ns the
// last period; 1: the window alone, its inherited work as recorded.
ReplayResult Replay(const StepGraph& graph, const StepEdit& edit = {}, int copies = 1);
// Periods a steady step is replayed for: enough for a backlog the edit changes to settle.
inline constexpr int kSteadyCopies = 4;

// A blocking call whose work is done before it starts still costs this much, at most its
// recorded duration (a query of the stream's state and the return).
inline constexpr int64_t kBlockingCallFloorNs = 5'000;

}  // namespace gpuspy::analysis::replay
