#include "analysis/replay/step_graph.h"

#include <algorithm>
#include <map>
#include <span>

#include "absl/container/flat_hash_map.h"
#include "analysis/blocking_calls.h"
#include "analysis/kernel_classifier.h"

namespace gpuspy::analysis::replay {
namespace {

// Work that starts within this of its stream's previous work did not wait for its launch: it
// queued, and says nothing about launch latency.
constexpr int64_t kQueuedGapNs = 1'000;

struct CallRef {
  int thread = -1;
  int call = -1;
};

bool Overlaps(int64_t start, int64_t end, Interval w) {
  return end > w.start_ns && start < w.end_ns;
}

// The calls of the window by thread, top-level only; a nested call (a driver call inside a
// runtime call) maps to the call that contains it.
void AddHostCalls(const EventColumns& ev, Interval w, StepGraph* g,
                  absl::flat_hash_map<uint64_t, CallRef>* by_correlation) {
  g->apis_base = ev.apis.data();
  g->call_of_api.assign(ev.apis.size(), {-1, -1});
  auto call_of = [&](const ApiEvent* a) -> std::pair<int, int>& {
    return g->call_of_api[static_cast<size_t>(a - g->apis_base)];
  };
  std::map<uint32_t, std::vector<const ApiEvent*>> by_thread;
  for (const ApiEvent& a : ev.apis) {
    if (a.start_ns >= w.start_ns && a.start_ns < w.end_ns) {
      by_thread[a.thread_id].push_back(&a);
    } else if (Overlaps(a.start_ns, a.end_ns, w)) {
      ++g->carried_events;
    }
  }
  for (auto& [tid, calls] : by_thread) {
    std::sort(calls.begin(), calls.end(), [](const ApiEvent* x, const ApiEvent* y) {
      return x->start_ns != y->start_ns ? x->start_ns < y->start_ns : x->end_ns > y->end_ns;
    });
    HostThread t;
    t.thread_id = tid;
    const int thread = static_cast<int>(g->threads.size());
    for (const ApiEvent* a : calls) {
      if (!t.calls.empty() && a->start_ns < t.calls.back().end_ns) {
        // Inside the previous top-level call: its launches are that call's.
        const CallRef parent{thread, static_cast<int>(t.calls.size()) - 1};
        by_correlation->try_emplace(a->correlation_id, parent);
        call_of(a) = {parent.thread, parent.call};
        continue;
      }
      HostCall c;
      c.api = a;
      c.start_ns = a->start_ns;
      c.end_ns = std::max(a->start_ns, a->end_ns);
      const CallRef ref{thread, static_cast<int>(t.calls.size())};
      (*by_correlation)[a->correlation_id] = ref;
      call_of(a) = {ref.thread, ref.call};
      t.calls.push_back(c);
    }
    g->threads.push_back(std::move(t));
  }
  // The main thread: the one whose host range is the step (ProfilerStep#N, the user's step range:
  // the window ends on its time), else the one with the most calls.
  uint32_t step_thread = 0;
  bool has_step_thread = false;
  for (const NvtxRangeEvent& r : ev.nvtx_ranges) {
    if (r.start_ns == w.start_ns && r.end_ns == w.end_ns) {
      step_thread = r.thread_id;
      has_step_thread = true;
      break;
    }
  }
  size_t most = 0;
  for (size_t i = 0; i < g->threads.size(); ++i) {
    if (has_step_thread && g->threads[i].thread_id == step_thread) {
      g->main_thread = static_cast<int>(i);
      break;
    }
    if (g->threads[i].calls.size() > most) {
      most = g->threads[i].calls.size();
      g->main_thread = static_cast<int>(i);
    }
  }
}

int StreamIndex(StepGraph* g, const StreamKey& key) {
  for (size_t i = 0; i < g->streams.size(); ++i) {
    if (g->streams[i] == key) return static_cast<int>(i);
  }
  g->streams.push_back(key);
  return static_cast<int>(g->streams.size()) - 1;
}

void AddOp(StepGraph* g, Interval w, const absl::flat_hash_map<uint64_t, CallRef>& by_correlation,
           GpuOp op, uint64_t correlation_id, const StreamKey& stream) {
  auto it = by_correlation.find(correlation_id);
  if (it != by_correlation.end()) {
    op.thread = it->second.thread;
    op.call = it->second.call;
  } else if (!Overlaps(op.start_ns, op.end_ns, w)) {
    return;  // neither launched from the step nor running in it
  } else {
    ++g->carried_events;
  }
  op.end_ns = std::max(op.start_ns, op.end_ns);
  op.stream = StreamIndex(g, stream);
  if (op.thread >= 0) {
    g->threads[op.thread].calls[op.call].launches.push_back(static_cast<int>(g->ops.size()));
  }
  g->ops.push_back(op);
}

void AddGpuOps(const EventColumns& ev, Interval w,
               const absl::flat_hash_map<uint64_t, CallRef>& by_correlation, StepGraph* g) {
  for (const KernelEvent& k : ev.kernels) {
    GpuOp op{.kind = GpuOpKind::kKernel, .start_ns = k.start_ns, .end_ns = k.end_ns};
    op.kernel = &k;
    AddOp(g, w, by_correlation, op, k.correlation_id, k.stream);
  }
  for (const MemcpyEvent& m : ev.memcpys) {
    GpuOp op{.kind = GpuOpKind::kMemcpy, .start_ns = m.start_ns, .end_ns = m.end_ns};
    op.memcpy = &m;
    AddOp(g, w, by_correlation, op, m.correlation_id, m.stream);
  }
  for (const MemsetEvent& m : ev.memsets) {
    AddOp(g, w, by_correlation,
          GpuOp{.kind = GpuOpKind::kMemset, .start_ns = m.start_ns, .end_ns = m.end_ns},
          m.correlation_id, m.stream);
  }
  for (const GraphLaunchEvent& x : ev.graph_launches) {
    AddOp(g, w, by_correlation,
          GpuOp{.kind = GpuOpKind::kGraph, .start_ns = x.start_ns, .end_ns = x.end_ns},
          x.correlation_id, x.stream);
  }
}

// Stream order, the run's launch latency, and the cross-stream waits.
void LinkOps(StepGraph* g) {
  std::vector<std::vector<int>> by_stream(g->streams.size());
  for (size_t i = 0; i < g->ops.size(); ++i) by_stream[g->ops[i].stream].push_back(static_cast<int>(i));
  std::vector<int64_t> latencies;
  for (std::vector<int>& order : by_stream) {
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return g->ops[a].start_ns < g->ops[b].start_ns;
    });
    for (size_t i = 0; i < order.size(); ++i) {
      GpuOp& op = g->ops[order[i]];
      op.prev_on_stream = i == 0 ? -1 : order[i - 1];
      if (op.carried()) continue;
      const bool queued =
          op.prev_on_stream >= 0 && op.start_ns - g->ops[op.prev_on_stream].end_ns < kQueuedGapNs;
      const int64_t api_start = g->threads[op.thread].calls[op.call].start_ns;
      if (!queued && op.start_ns >= api_start) latencies.push_back(op.start_ns - api_start);
    }
  }
  if (latencies.empty()) {
    g->launch_latency_ns = kMinLaunchLatencyNs;
  } else {
    auto q = latencies.begin() + static_cast<std::ptrdiff_t>(latencies.size() / 4);
    std::nth_element(latencies.begin(), q, latencies.end());
    g->launch_latency_ns = std::clamp(*q, kMinLaunchLatencyNs, kMaxLaunchLatencyNs);
  }
  // Ops by end, for finding what another stream finished just before an op started.
  std::vector<int> by_end(g->ops.size());
  for (size_t i = 0; i < by_end.size(); ++i) by_end[i] = static_cast<int>(i);
  std::sort(by_end.begin(), by_end.end(),
            [&](int a, int b) { return g->ops[a].end_ns < g->ops[b].end_ns; });
  for (GpuOp& op : g->ops) {
    if (op.carried()) continue;
    const int64_t api_start = g->threads[op.thread].calls[op.call].start_ns;
    int64_t explained = api_start + std::min(g->launch_latency_ns, op.start_ns - api_start);
    if (op.prev_on_stream >= 0) explained = std::max(explained, g->ops[op.prev_on_stream].end_ns);
    if (op.start_ns - explained < kQueuedGapNs) continue;
    auto it = std::upper_bound(by_end.begin(), by_end.end(), op.start_ns,
                               [&](int64_t t, int i) { return t < g->ops[i].end_ns; });
    while (it != by_end.begin()) {
      const GpuOp& other = g->ops[*--it];
      if (other.end_ns < explained || op.start_ns - other.end_ns > kCrossStreamDependencyNs) break;
      if (other.stream != op.stream) {
        op.dependency = *it;
        break;
      }
    }
  }
  int64_t own_end = g->window.start_ns;
  for (const GpuOp& op : g->ops) {
    if (!op.carried()) own_end = std::max(own_end, op.end_ns);
  }
  g->gpu_spill_ns = std::max(own_end, g->window.end_ns) - g->window.end_ns;
  g->gpu_end_ns = own_end;
}

// A collective reduces what was computed before it was launched: DDP and FSDP make NCCL's stream
// wait on an event recorded on the compute stream right before the launch (cudaStreamWaitEvent,
// which traces rarely tie to its event). When the host launched the collective late, its recorded
// start is explained by the launch and LinkOps infers nothing; replayed with a faster host it
// would start before the gradients it reduces exist, and its time would vanish from the step
// (a sync_stall on a DDP rank predicted the all-reduce's 3 ms as part of its gain). So each
// collective also waits for the last work launched before it on every other stream, unless the
// recording shows it did not (that work was still running when the collective started).
void LinkCollectivesToTheirInputs(const StringTable& strings, StepGraph* g) {
  absl::flat_hash_map<StringRef, bool> communication;
  auto is_collective = [&](const GpuOp& op) {
    if (op.kernel == nullptr) return false;
    auto [it, fresh] = communication.try_emplace(op.kernel->name, false);
    if (fresh) it->second = ClassifyKernel(strings.Get(op.kernel->name)) == KernelClass::kCommunication;
    return it->second;
  };
  std::vector<bool> comm_stream(g->streams.size(), false);
  bool any = false;
  for (const GpuOp& op : g->ops) {
    if (!op.carried() && is_collective(op)) comm_stream[op.stream] = any = true;
  }
  if (!any) return;
  auto launch_of = [&](const GpuOp& op) { return g->threads[op.thread].calls[op.call].start_ns; };
  // Per compute stream: its launched ops by launch time, with the op that ends last so far.
  struct Launched {
    int64_t launch_ns;
    int latest_end_op;
  };
  std::vector<std::vector<Launched>> by_stream(g->streams.size());
  std::vector<int> order(g->ops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const bool ca = g->ops[a].carried(), cb = g->ops[b].carried();
    if (ca || cb) return ca && !cb;  // carried ops (no launch here) first; they are skipped
    return launch_of(g->ops[a]) < launch_of(g->ops[b]);
  });
  for (int i : order) {
    const GpuOp& op = g->ops[i];
    if (op.carried() || comm_stream[op.stream]) continue;
    auto& list = by_stream[op.stream];
    int latest = i;
    if (!list.empty() && g->ops[list.back().latest_end_op].end_ns > op.end_ns) latest = list.back().latest_end_op;
    list.push_back({launch_of(op), latest});
  }
  for (GpuOp& op : g->ops) {
    if (op.carried() || !is_collective(op)) continue;
    const int64_t launch = launch_of(op);
    int input = op.dependency;
    for (const auto& list : by_stream) {
      auto it = std::lower_bound(list.begin(), list.end(), launch,
                                 [](const Launched& l, int64_t t) { return l.launch_ns < t; });
      if (it == list.begin()) continue;
      const GpuOp& last = g->ops[std::prev(it)->latest_end_op];
      if (last.end_ns > op.start_ns + kQueuedGapNs) continue;  // it ran beside the collective
      if (input < 0 || last.end_ns > g->ops[input].end_ns) input = std::prev(it)->latest_end_op;
    }
    op.dependency = input;
  }
}

// What each blocking call waited for: of the work launched before it (on its stream, for a
// stream sync), the piece whose end released it.
void LinkBlockingCalls(const EventColumns& ev, const std::vector<BlockingCall>& blocking_calls,
                       StepGraph* g) {
  absl::flat_hash_map<uint64_t, const SyncEvent*> sync_by_correlation;
  for (const SyncEvent& y : ev.syncs) sync_by_correlation.try_emplace(y.correlation_id, &y);
  std::vector<int> by_end(g->ops.size());
  for (size_t i = 0; i < by_end.size(); ++i) by_end[i] = static_cast<int>(i);
  std::sort(by_end.begin(), by_end.end(),
            [&](int a, int b) { return g->ops[a].end_ns < g->ops[b].end_ns; });
  for (const BlockingCall& b : blocking_calls) {
    if (b.api == nullptr) continue;
    const std::optional<std::pair<int, int>> ref = g->CallOf(b.api);
    if (!ref) continue;
    HostCall& call = g->threads[ref->first].calls[ref->second];
    call.blocking = true;
    call.allocator = call.allocator || b.allocator;
    int stream = -1;
    if (auto y = sync_by_correlation.find(b.api->correlation_id);
        y != sync_by_correlation.end() && y->second->sync_kind == SyncKind::kStream) {
      for (size_t s = 0; s < g->streams.size(); ++s) {
        if (g->streams[s] == y->second->stream) stream = static_cast<int>(s);
      }
    }
    // A synchronous copy (pageable, or cudaMemcpy) runs in its stream's order: the call waited
    // for the work queued before its copy, then copied. It ends when that work ends plus what the
    // copy and its staging took (return_ns), however long that is; LinkOps orders the copy itself.
    if (!call.launches.empty()) {
      const int before = g->ops[call.launches.front()].prev_on_stream;
      if (before >= 0 && g->ops[before].end_ns > call.start_ns && g->ops[before].end_ns <= call.end_ns) {
        call.waits_for = before;
        call.return_ns = call.end_ns - g->ops[before].end_ns;
        continue;
      }
    }
    // The latest-ending candidate at or before the call's end.
    auto it = std::upper_bound(by_end.begin(), by_end.end(), call.end_ns,
                               [&](int64_t t, int i) { return t < g->ops[i].end_ns; });
    while (it != by_end.begin()) {
      const int i = *--it;
      const GpuOp& op = g->ops[i];
      if (op.end_ns <= call.start_ns) break;  // done before the call: nothing to wait for
      if (stream >= 0 && op.stream != stream) continue;
      const bool launched_before =
          op.carried() || g->threads[op.thread].calls[op.call].start_ns <= call.start_ns;
      if (!launched_before) continue;
      if (call.end_ns - op.end_ns <= kBlockingReturnSlackNs) {
        call.waits_for = i;
        call.return_ns = call.end_ns - op.end_ns;
      }
      break;
    }
  }
}

// Host time of thread `tid` inside [start, end] covered by its host ranges (work it was doing).
// `ranges` are disjoint and in time order: the first that ends after `start` is found by binary
// search (walking from the step's first range for each idle stretch was most of building a graph).
int64_t CoveredByRanges(const std::vector<Interval>& ranges, int64_t start, int64_t end) {
  int64_t covered = 0;
  auto first = std::upper_bound(ranges.begin(), ranges.end(), start,
                                [](int64_t t, const Interval& r) { return t < r.end_ns; });
  for (const Interval& r : std::span(first, ranges.end())) {
    if (r.start_ns >= end) break;
    covered += std::max<int64_t>(0, std::min(end, r.end_ns) - std::max(start, r.start_ns));
  }
  return covered;
}

// Hand-offs between threads: a call that starts after its thread idled (no call, and host ranges
// cover less than half of the stretch: it waited rather than worked) waited for the other
// thread's latest call before it: the main thread resuming when autograd's thread finishes
// backward, autograd's thread starting when the main thread calls backward(). With no host ranges
// recorded, an idle stretch is a hand-off only when the other thread's call ended within
// kHandoffSlackNs of it.
void LinkHandoffs(const EventColumns& ev, StepGraph* g) {
  if (g->threads.size() < 2) return;
  struct End {
    int64_t end_ns;
    int thread;
    int call;
  };
  std::vector<End> ends;
  for (size_t t = 0; t < g->threads.size(); ++t) {
    for (size_t c = 0; c < g->threads[t].calls.size(); ++c) {
      ends.push_back({g->threads[t].calls[c].end_ns, static_cast<int>(t), static_cast<int>(c)});
    }
  }
  std::sort(ends.begin(), ends.end(), [](const End& a, const End& b) { return a.end_ns < b.end_ns; });
  std::map<uint32_t, std::vector<Interval>> ranges;  // top-level ranges per thread, by start
  for (const NvtxRangeEvent& r : ev.nvtx_ranges) {
    if (r.end_ns > g->window.start_ns && r.start_ns < g->window.end_ns) ranges[r.thread_id].push_back({r.start_ns, r.end_ns});
  }
  for (auto& [tid, v] : ranges) {
    std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
    v = IntervalSet::Union(std::move(v)).intervals();
  }
  for (size_t t = 0; t < g->threads.size(); ++t) {
    std::vector<HostCall>& calls = g->threads[t].calls;
    const auto own = ranges.find(g->threads[t].thread_id);
    for (size_t c = 0; c < calls.size(); ++c) {
      const int64_t idle_from = c == 0 ? g->window.start_ns : calls[c - 1].end_ns;
      const int64_t start = calls[c].start_ns;
      if (start - idle_from < kMinHandoffGapNs) continue;
      const bool has_ranges = !ranges.empty();
      const int64_t worked = own == ranges.end() ? 0 : CoveredByRanges(own->second, idle_from, start);
      const bool waited = has_ranges && 2 * worked < start - idle_from;
      auto it = std::upper_bound(ends.begin(), ends.end(), start,
                                 [](int64_t x, const End& e) { return x < e.end_ns; });
      while (it != ends.begin()) {
        const End& e = *--it;
        if (e.end_ns <= idle_from || (!waited && start - e.end_ns > kHandoffSlackNs)) break;
        if (e.thread != static_cast<int>(t)) {
          calls[c].handoff = {e.thread, e.call};
          calls[c].waited_before = waited;
          break;
        }
      }
    }
  }
}

}  // namespace

uint64_t StepGraph::host_calls() const {
  uint64_t n = 0;
  for (const HostThread& t : threads) n += t.calls.size();
  return n;
}

uint64_t StepGraph::launched_ops() const {
  uint64_t n = 0;
  for (const GpuOp& op : ops) n += op.carried() ? 0 : 1;
  return n;
}

StepGraph BuildStepGraph(const EventColumns& events, const StringTable& strings, Interval window) {
  return BuildStepGraph(events, strings, window, FindBlockingCalls(events, strings, window));
}

StepGraph BuildStepGraph(const EventColumns& events, const StringTable& strings, Interval window,
                         const std::vector<BlockingCall>& blocking_calls) {
  StepGraph g;
  g.window = window;
  absl::flat_hash_map<uint64_t, CallRef> by_correlation;
  by_correlation.reserve(events.apis.size());
  AddHostCalls(events, window, &g, &by_correlation);
  AddGpuOps(events, window, by_correlation, &g);
  LinkOps(&g);
  LinkCollectivesToTheirInputs(strings, &g);
  LinkBlockingCalls(events, blocking_calls, &g);
  LinkHandoffs(events, &g);
  return g;
}

}  // namespace gpuspy::analysis::replay
