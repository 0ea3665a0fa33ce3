// Where in a window the GPU sat idle and why: the one rule behind the step report's idle figures
// (StepBreakdown.idle_*) and the timeline's shading, so that the two always add up the same.
//
// Every idle nanosecond gets exactly one cause, first match wins:
//   sync_blocked  the host waits in a synchronizing call (blocking_calls.h);
//   launch_bound  the host is inside a launch call, or the gap between two pieces of GPU work is
//                 shorter than kLaunchGapNs (back-to-back launches that cannot keep up);
//   input         the host is in the input pipeline: a DataLoader / data-loading host range, or,
//                 at the step's start before its first CUDA call, host work no range explains
//                 (waiting for the batch: the classic input-stall signature of live capture);
//   host_other    anything else the host does without CUDA (Python, logging, metrics, CPU ops).
// A gap that starts as a data-loader stall stays input even right after a sync (input first).
#pragma once

#include <string_view>
#include <vector>

#include "collector/analysis/blocking_calls.h"
#include "collector/analysis/intervals.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

struct IdleAttribution {
  IntervalSet idle;  // no kernel, copy, memset or graph running; within the window
  // The causes: disjoint, and together exactly `idle`.
  IntervalSet sync_blocked;
  IntervalSet launch_bound;
  IntervalSet input;
  IntervalSet host_other;
  // The host calls that block on the GPU, for highlighting on their thread's lane.
  std::vector<BlockingCall> blocking_calls;
  // Not a cause of its own (it overlaps the causes above): the GPU idle after each blocking call
  // until the next GPU work. The call emptied the launch queue, so whatever the host does next is
  // exposed; sync_stall counts it as lost to the sync and host_bound leaves it to sync_stall.
  IntervalSet sync_drain;
};

// Union of everything that keeps the GPU busy (kernels, graph launches, copies, memsets).
IntervalSet GpuBusy(const EventColumns& events, Interval window);

// `events` must outlive the result (blocking_calls point into it). `busy` is GpuBusy's answer
// (callers that already have it pass it in).
IdleAttribution AttributeIdle(const EventColumns& events, const StringTable& strings,
                              Interval window, const IntervalSet& busy);
IdleAttribution AttributeIdle(const EventColumns& events, const StringTable& strings,
                              Interval window);

// A host range that is the input pipeline at work: PyTorch's "enumerate(DataLoader)#..."
// annotations, "## data_load ##"-style user ranges.
bool IsInputRange(std::string_view name);

// Host ranges that describe what the host does inside the window: every domain except the
// recording's own span and range-profiler ranges, and not a range enclosing the whole window
// (the step's own ProfilerStep#N range and wrappers around it say nothing about its parts).
bool IsActivityRange(const NvtxRangeEvent& r, const StringTable& strings, Interval window);

}  // namespace gpuspy::analysis
