// Where in a window the GPU sat idle and why: the one rule behind the step report's idle figures
// (StepBreakdown.idle_*) and the timeline's shading, so that the two always add up the same.
//
// Every idle nanosecond gets exactly one cause, first match wins:
//   cuda_call     the host is inside a CUDA call with nothing on the GPU to wait for: the driver
//                 doing its own work (context creation, module loading, allocation, stream and
//                 handle creation). A call counts when it is long for what it is: any call but a
//                 launch from kMinDriverCallNs, a launch from kMinSlowLaunchNs (lazy loading or
//                 JIT of its module: a launch itself takes microseconds), and the part of
//                 cudaFree/cuMemFree after the GPU work it waited for, plus kWaitReturnSlackNs;
//                 on a thread that launches GPU work in the window (any, when none does);
//   sync_blocked  the host waits in a synchronizing call (blocking_calls.h);
//   launch_bound  the host is inside a launch call, or the gap between two pieces of GPU work is
//                 shorter than kLaunchGapNs (back-to-back launches that cannot keep up) and does
//                 not follow a blocking call (that gap is the drain, below);
//   input         the host is in the input pipeline: a DataLoader / data-loading host range, or,
//                 at the step's start before its first CUDA call, host work no range explains
//                 (waiting for the batch: the classic input-stall signature of live capture);
//   sync_blocked  (again) the drain: from the end of a blocking call to the next GPU work. The
//                 call emptied the launch queue, so what the host does next is exposed because
//                 of it; without the sync that work would overlap the GPU's. Only when the
//                 step's syncs matter (SyncsMatter: heavy or frequent): after one light sync
//                 the host was barely ahead, and its work after it is host time;
//   host_other    anything else the host does without CUDA (Python, logging, metrics, CPU ops).
// The findings use the same sets (sync_stall: sync_blocked; launch_storm: launch_bound;
// input_stall: input; host_bound: host_other; cuda_api_bound: cuda_call), so every figure shown
// for a step agrees.
//
// Explicit syncs and synchronous copies stay sync_blocked even when no GPU work is recorded
// under them: the work they wait for may be unrecorded (launched before the profiler started),
// which data_quality.h reports, rather than a driver's own work.
#pragma once

#include <string_view>
#include <vector>

#include "analysis/blocking_calls.h"
#include "analysis/intervals.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

// Host time inside one CUDA call from which it is the driver's own work, not call overhead: API
// calls that only query or record take microseconds.
inline constexpr int64_t kMinDriverCallNs = 100'000;
// A launch is microseconds; one that takes a millisecond loads (or JIT-compiles) its module.
inline constexpr int64_t kMinSlowLaunchNs = 1'000'000;
// A call that waited for the GPU returns within this of the GPU work's end.
inline constexpr int64_t kWaitReturnSlackNs = 200'000;

// A CUDA call in which the host did the driver's work (cuda_call below).
struct DriverCall {
  const ApiEvent* api = nullptr;
  Interval span;  // the part that is driver work, clipped to the window
};

struct IdleAttribution {
  IntervalSet idle;  // no kernel, copy, memset or graph running; within the window
  // The causes: disjoint, and together exactly `idle`.
  IntervalSet sync_blocked;  // blocked in a sync, and the drain after it
  IntervalSet launch_bound;
  IntervalSet input;
  IntervalSet host_other;
  IntervalSet cuda_call;  // inside CUDA calls with nothing on the GPU to wait for
  // The host calls that block on the GPU, for highlighting on their thread's lane.
  std::vector<BlockingCall> blocking_calls;
  // The calls behind cuda_call, for naming them.
  std::vector<DriverCall> driver_calls;
  // SyncsMatter(blocking_calls): whether drains are the syncs' (and sync_stall may fire).
  bool syncs_matter = false;
  // The part of sync_blocked that is the drain after blocking calls (not the blocked time).
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

// IsActivityRange over one window's ranges, each domain's text looked up once in a row: a step's
// thousands of ranges come from a handful of domains, and the lookup was most of the test.
class ActivityRangeFilter {
 public:
  ActivityRangeFilter(const StringTable& strings, Interval window) : strings_(strings), window_(window) {}
  bool operator()(const NvtxRangeEvent& r);

 private:
  const StringTable& strings_;
  Interval window_;
  bool known_ = false;          // whether last_domain_ has been looked up
  StringRef last_domain_ = 0;
  bool last_domain_counts_ = false;
};

}  // namespace gpuspy::analysis
