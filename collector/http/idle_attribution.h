// Where in a step the GPU sat idle and why, as intervals the timeline can shade. The step report
// only carries the totals (StepBreakdown.idle_*); this recomputes the intervals behind them with
// the same analysis pieces and the same first-match rule, so the shading adds up to the report.
#pragma once

#include <vector>

#include "collector/analysis/blocking_calls.h"
#include "collector/analysis/intervals.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::collector {

struct IdleAttribution {
  // GPU idle (no kernel, copy or memset running), by cause; disjoint, within the window.
  analysis::IntervalSet sync_blocked;  // the host waits in a synchronizing call
  analysis::IntervalSet launch_bound;  // inside a launch call, or a gap too short to be anything else
  analysis::IntervalSet host_other;    // the host is doing something without CUDA (input, Python)
  // The host calls that block on the GPU, for highlighting on their thread's lane.
  std::vector<analysis::BlockingCall> blocking_calls;
};

// `events` must outlive the result (blocking_calls point into it).
IdleAttribution AttributeIdle(const EventColumns& events, const StringTable& strings,
                              analysis::Interval window);

}  // namespace gpuspy::collector
