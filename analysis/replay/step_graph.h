// A step as a dependency graph, built from the recorded events (live capture and imported traces
// alike), so that it can be replayed with an edit (replay.h): what the step would have taken
// without a cause.
//
// The model (docs/detectors.md, "What-if replay"):
//   - Host: each thread's CUDA calls in the window, in order. Between two calls the thread does
//     host work (Python, ATen, data loading): the recorded gap, kept as a duration. A call costs
//     its recorded duration, except a blocking call (blocking_calls.h) that waited for GPU work:
//     it ends when that work ends plus the recorded return latency (or after its own floor cost
//     if the work is done by then).
//   - GPU: each piece of work (kernel, copy, memset, graph) launched by a call in the window, on
//     its stream in recorded order. It starts when its latest constraint allows: its launch (plus
//     the launch latency measured in the run), the previous work on its stream, and a cross-stream
//     dependency (an event wait) inferred where work starts right after another stream's work
//     ends and nothing else explains the delay. The recorded slack after the binding constraint
//     is kept, so the unedited replay reproduces the recording.
//   - Work running in the window whose launch is not in it (launched by an earlier step, or
//     before the recording began), and calls begun before the window, are carried as recorded.
//   - The step ends when the main thread (the one with the most CUDA calls) reaches the window's
//     end, or when the step's GPU work is done (less what already ran past the window's end in
//     the recording: the next step's host overlaps it), whichever is later.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/blocking_calls.h"
#include "analysis/intervals.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis::replay {

enum class GpuOpKind : uint8_t { kKernel, kMemcpy, kMemset, kGraph };

struct GpuOp {
  GpuOpKind kind = GpuOpKind::kKernel;
  int64_t start_ns = 0;  // recorded
  int64_t end_ns = 0;
  int stream = 0;        // index into StepGraph::streams
  // The call that launched it ({thread, call} indices), or -1: carried as recorded.
  int thread = -1;
  int call = -1;
  int prev_on_stream = -1;  // the op before it on its stream (carried ops included), or -1
  int dependency = -1;      // an op on another stream it waited for (inferred), or -1
  // What the edits need to know of it.
  const KernelEvent* kernel = nullptr;
  const MemcpyEvent* memcpy = nullptr;
  int64_t duration_ns() const { return end_ns - start_ns; }
  bool carried() const { return call < 0; }
};

struct HostCall {
  const ApiEvent* api = nullptr;
  int64_t start_ns = 0;  // recorded
  int64_t end_ns = 0;
  // A blocking call that waited for GPU work: the op whose end released it, and how long after
  // that end it returned. -1: the call's duration is its own (it did not wait, or what it
  // waited for is not in the graph).
  int waits_for = -1;
  int64_t return_ns = 0;
  bool blocking = false;   // blocking_calls.h says it blocks (whether or not it waited)
  bool allocator = false;  // cudaFree/cuMemFree (alloc_churn's)
  std::vector<int> launches;  // ops it launched
  // A hand-off from another thread ({thread, call}, or {-1, -1}): the call starts right after
  // that call ended, after an idle stretch of its own thread (the main thread resuming when
  // autograd's thread finishes backward, a worker picking up a queued task).
  std::pair<int, int> handoff{-1, -1};
  // The stretch before the call was its thread waiting (no call, host ranges cover less than half
  // of it), not working: replayed, it lasts until the hand-off, however long that takes.
  bool waited_before = false;
  int64_t duration_ns() const { return end_ns - start_ns; }
};

struct HostThread {
  uint32_t thread_id = 0;
  std::vector<HostCall> calls;  // top-level calls (a call nested in another is part of it)
};

struct StepGraph {
  Interval window;
  std::vector<HostThread> threads;
  // The thread whose position at the window's end ends the step: the one whose host range is the
  // step (ProfilerStep#N), else the one with the most CUDA calls.
  int main_thread = -1;
  std::vector<GpuOp> ops;
  std::vector<StreamKey> streams;
  // Recorded launch latency (launch call start to GPU start) of work that did not queue: the
  // lower quartile over the step, bounded (kMinLaunchLatencyNs..kMaxLaunchLatencyNs).
  int64_t launch_latency_ns = 0;
  // The recorded end of the step's own GPU work beyond the window's end (see above).
  int64_t gpu_spill_ns = 0;
  // The window ends where the recording did (the last step found by its kernels' period runs to
  // the last GPU work): what the main thread did after its last call was not recorded, so it is
  // no host work, and the step ends when that call or the GPU work does (what_if.cc sets it).
  bool host_tail_unrecorded = false;
  // The recorded end of the step's own GPU work (the window's start when it has none).
  int64_t gpu_end_ns = 0;
  uint64_t carried_events = 0;
  // The top-level call ({thread, call}) of `api`, one of the step's events.apis; a nested call
  // maps to the call that contains it. nullopt for a call outside the window (or any other).
  std::optional<std::pair<int, int>> CallOf(const ApiEvent* api) const {
    if (api < apis_base || api >= apis_base + call_of_api.size()) return std::nullopt;
    const std::pair<int, int>& ref = call_of_api[static_cast<size_t>(api - apis_base)];
    if (ref.first < 0) return std::nullopt;
    return ref;
  }
  // CallOf's table, by a call's index in the step's events.apis (from apis_base): {-1, -1} for
  // calls outside the window. A vector, not a map by pointer: the map and the copy it was made
  // from were a third of building the graph.
  const ApiEvent* apis_base = nullptr;
  std::vector<std::pair<int, int>> call_of_api;
  // The order replay.cc evaluates the nodes of `copies` copies in, found once on the unedited
  // graph and reused by every edit (edits only remove dependencies, or replace one by an earlier
  // node's, so the order stays valid). A cache: filled by Replay, not part of the model.
  mutable std::map<int, std::vector<int>> replay_order;
  uint64_t host_calls() const;
  uint64_t launched_ops() const;
};

inline constexpr int64_t kMinLaunchLatencyNs = 1'000;
inline constexpr int64_t kMaxLaunchLatencyNs = 20'000;
// Work starting at most this long after another stream's work ended, with nothing else
// explaining its start, waited for it (cudaStreamWaitEvent: NCCL after compute, the optimizer
// after the last all-reduce).
inline constexpr int64_t kCrossStreamDependencyNs = 10'000;
// A call that starts within kHandoffSlackNs of another thread's call ending, after at least
// kMinHandoffGapNs without a call on its own thread, waited for that call (a hand-off between threads).
inline constexpr int64_t kHandoffSlackNs = 30'000;
inline constexpr int64_t kMinHandoffGapNs = 50'000;
// A blocking call that returned more than this after the last GPU work it could have waited
// for did not wait for it (its time is its own: staging a pageable copy, the driver's work).
inline constexpr int64_t kBlockingReturnSlackNs = 200'000;

StepGraph BuildStepGraph(const EventColumns& events, const StringTable& strings, Interval window);
// The same with the window's blocking calls already found (FindBlockingCalls over `window`: the
// step report's IdleAttribution.blocking_calls), instead of finding them a second time.
StepGraph BuildStepGraph(const EventColumns& events, const StringTable& strings, Interval window,
                         const std::vector<BlockingCall>& blocking_calls);

}  // namespace gpuspy::analysis::replay
