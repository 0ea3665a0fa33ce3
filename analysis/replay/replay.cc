#include "analysis/replay/replay.h"

#include <algorithm>
#include <deque>
#include <vector>

namespace gpuspy::analysis::replay {
namespace {

// Each call and each op has a start node and an end node; a node's time is computed once every
// node it depends on is known (Kahn's order over the dependency DAG).
class Replayer {
 public:
  Replayer(const StepGraph& g, const StepEdit& e) : g_(g), e_(e) {
    int n = 0;
    for (const HostThread& t : g.threads) {
      call_base_.push_back(n);
      n += static_cast<int>(t.calls.size());
    }
    op_base_ = n;
    nodes_ = 2 * (n + static_cast<int>(g.ops.size()));
    time_.assign(nodes_, 0);
    pending_.assign(nodes_, 0);
    dependents_.assign(nodes_, {});
    effective_prev_.assign(g.ops.size(), -1);
    for (size_t i = 0; i < g.ops.size(); ++i) {
      // Work moved to a side stream leaves its stream: the next op waits for the one before it.
      int prev = g.ops[i].prev_on_stream;
      while (prev >= 0 && e.detached_ops.contains(prev)) prev = g.ops[prev].prev_on_stream;
      effective_prev_[i] = e.detached_ops.contains(static_cast<int>(i)) ? -1 : prev;
    }
  }

  ReplayResult Run() {
    Link();
    std::deque<int> ready;
    for (int v = 0; v < nodes_; ++v) {
      if (pending_[v] == 0) ready.push_back(v);
    }
    int done = 0;
    while (!ready.empty()) {
      const int v = ready.front();
      ready.pop_front();
      time_[v] = Compute(v);
      ++done;
      for (int d : dependents_[v]) {
        if (--pending_[d] == 0) ready.push_back(d);
      }
    }
    ReplayResult r;
    if (done != nodes_) {
      r.error = "the recorded order is not causal (a dependency cycle in the step's graph)";
      return r;
    }
    r.ok = true;
    r.host_end_ns = HostEnd();
    r.gpu_end_ns = g_.window.start_ns;
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      if (!g_.ops[i].carried()) r.gpu_end_ns = std::max(r.gpu_end_ns, time_[OpEnd(i)]);
    }
    r.gpu_end_ns -= std::max<int64_t>(0, g_.gpu_spill_ns);
    r.step_ns = std::max(r.host_end_ns, r.gpu_end_ns) - g_.window.start_ns;
    return r;
  }

 private:
  int CallStart(int t, int c) const { return 2 * (call_base_[t] + c); }
  int CallEnd(int t, int c) const { return CallStart(t, c) + 1; }
  int OpStart(size_t i) const { return 2 * (op_base_ + static_cast<int>(i)); }
  int OpEnd(size_t i) const { return OpStart(i) + 1; }

  void Edge(int from, int to) {
    dependents_[from].push_back(to);
    ++pending_[to];
  }

  bool Unblocked(int t, int c) const { return e_.call_cost.contains({t, c}); }

  void Link() {
    kind_.assign(nodes_, {});
    for (size_t t = 0; t < g_.threads.size(); ++t) {
      const auto& calls = g_.threads[t].calls;
      for (size_t c = 0; c < calls.size(); ++c) {
        const int ti = static_cast<int>(t), ci = static_cast<int>(c);
        kind_[CallStart(ti, ci)] = {Kind::kCallStart, ti, ci};
        kind_[CallEnd(ti, ci)] = {Kind::kCallEnd, ti, ci};
        if (c > 0) Edge(CallEnd(ti, ci - 1), CallStart(ti, ci));
        Edge(CallStart(ti, ci), CallEnd(ti, ci));
        const int w = calls[c].waits_for;
        if (w >= 0 && !Unblocked(ti, ci) && !e_.detached_ops.contains(w)) {
          Edge(OpEnd(w), CallEnd(ti, ci));
        }
      }
    }
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      const GpuOp& op = g_.ops[i];
      kind_[OpStart(i)] = {Kind::kOpStart, static_cast<int>(i), 0};
      kind_[OpEnd(i)] = {Kind::kOpEnd, static_cast<int>(i), 0};
      Edge(OpStart(i), OpEnd(i));
      if (op.carried()) continue;
      Edge(CallStart(op.thread, op.call), OpStart(i));
      if (effective_prev_[i] >= 0) Edge(OpEnd(effective_prev_[i]), OpStart(i));
      if (Dependency(i) >= 0) Edge(OpEnd(Dependency(i)), OpStart(i));
    }
  }

  int Dependency(size_t i) const {
    const int d = g_.ops[i].dependency;
    if (d < 0 || e_.detached_ops.contains(d) || e_.detached_ops.contains(static_cast<int>(i))) {
      return -1;
    }
    return d;
  }

  int64_t Gap(int t, int c) const {
    const HostThread& th = g_.threads[t];
    const int64_t from = c == 0 ? g_.window.start_ns : th.calls[c - 1].end_ns;
    const int64_t to = th.calls[c].start_ns;
    return std::max<int64_t>(0, to - from - e_.RemovedWithin(th.thread_id, from, to));
  }

  int64_t Compute(int v) const {
    const Node& n = kind_[v];
    switch (n.kind) {
      case Kind::kCallStart:
        return (n.b == 0 ? g_.window.start_ns : time_[CallEnd(n.a, n.b - 1)]) + Gap(n.a, n.b);
      case Kind::kCallEnd: {
        const HostCall& call = g_.threads[n.a].calls[n.b];
        const int64_t start = time_[CallStart(n.a, n.b)];
        if (auto it = e_.call_cost.find({n.a, n.b}); it != e_.call_cost.end()) {
          return start + it->second;
        }
        if (call.waits_for < 0 || e_.detached_ops.contains(call.waits_for)) {
          return start + (call.waits_for < 0 ? call.duration_ns()
                                             : std::min(call.duration_ns(), kBlockingCallFloorNs));
        }
        return std::max(start + std::min(call.duration_ns(), kBlockingCallFloorNs),
                        time_[OpEnd(call.waits_for)] + call.return_ns);
      }
      case Kind::kOpStart:
        return OpStartTime(n.a);
      case Kind::kOpEnd: {
        auto it = e_.op_duration.find(n.a);
        return time_[OpStart(n.a)] +
               (it != e_.op_duration.end() ? it->second : g_.ops[n.a].duration_ns());
      }
    }
    return 0;
  }

  // The op starts when its latest constraint allows, keeping the recorded slack after the
  // constraint that bound it; constraints that did not bind may bind now, less any recorded
  // excess over the op's start (timestamps that overlap by a little).
  int64_t OpStartTime(int i) const {
    const GpuOp& op = g_.ops[i];
    if (op.carried()) return op.start_ns;
    struct Constraint {
      int64_t recorded;
      int64_t replayed;
    };
    Constraint cs[3];
    int n = 0;
    const int64_t api_start = g_.threads[op.thread].calls[op.call].start_ns;
    const int64_t latency = std::min(g_.launch_latency_ns, op.start_ns - api_start);
    cs[n++] = {api_start + latency, time_[CallStart(op.thread, op.call)] + latency};
    if (effective_prev_[i] >= 0) {
      const int p = effective_prev_[i];
      cs[n++] = {g_.ops[p].end_ns, time_[OpEnd(p)]};
    }
    if (Dependency(i) >= 0) {
      const int d = Dependency(i);
      cs[n++] = {g_.ops[d].end_ns, time_[OpEnd(d)]};
    }
    int binding = 0;
    for (int j = 1; j < n; ++j) {
      if (cs[j].recorded > cs[binding].recorded) binding = j;
    }
    int64_t start = cs[binding].replayed + (op.start_ns - cs[binding].recorded);
    for (int j = 0; j < n; ++j) {
      if (j == binding) continue;
      start = std::max(start, cs[j].replayed - std::max<int64_t>(0, cs[j].recorded - op.start_ns));
    }
    return start;
  }

  // Where the main thread is when it reaches the window's end.
  int64_t HostEnd() const {
    const int64_t end = g_.window.end_ns;
    if (g_.main_thread < 0) {
      return end;  // no CUDA calls: the host's time is as recorded
    }
    const HostThread& th = g_.threads[g_.main_thread];
    const int last = static_cast<int>(th.calls.size()) - 1;
    const HostCall& call = th.calls[last];
    const int64_t last_end = time_[CallEnd(g_.main_thread, last)];
    if (call.end_ns > end) return last_end - (call.end_ns - end);
    return last_end + std::max<int64_t>(
                          0, end - call.end_ns - e_.RemovedWithin(th.thread_id, call.end_ns, end));
  }

  enum class Kind : uint8_t { kCallStart, kCallEnd, kOpStart, kOpEnd };
  struct Node {
    Kind kind = Kind::kCallStart;
    int a = 0;  // thread, or op
    int b = 0;  // call
  };

  const StepGraph& g_;
  const StepEdit& e_;
  std::vector<int> call_base_;
  int op_base_ = 0;
  int nodes_ = 0;
  std::vector<int64_t> time_;
  std::vector<int> pending_;
  std::vector<std::vector<int>> dependents_;
  std::vector<Node> kind_;
  std::vector<int> effective_prev_;
};

}  // namespace

void StepEdit::Merge(const StepEdit& other) {
  for (const auto& [tid, set] : other.removed_host) {
    auto [it, fresh] = removed_host.try_emplace(tid, set);
    if (!fresh) {
      std::vector<Interval> all = it->second.intervals();
      all.insert(all.end(), set.intervals().begin(), set.intervals().end());
      it->second = IntervalSet::Union(std::move(all));
    }
  }
  for (const auto& [call, cost] : other.call_cost) {
    auto [it, fresh] = call_cost.try_emplace(call, cost);
    if (!fresh) it->second = std::min(it->second, cost);
  }
  for (const auto& [op, ns] : other.op_duration) {
    auto [it, fresh] = op_duration.try_emplace(op, ns);
    if (!fresh) it->second = std::min(it->second, ns);
  }
  detached_ops.insert(other.detached_ops.begin(), other.detached_ops.end());
}

int64_t StepEdit::RemovedWithin(uint32_t thread_id, int64_t start, int64_t end) const {
  auto it = removed_host.find(thread_id);
  if (it == removed_host.end() || end <= start) return 0;
  const std::vector<Interval>& v = it->second.intervals();
  auto i = std::upper_bound(v.begin(), v.end(), start,
                            [](int64_t t, const Interval& x) { return t < x.end_ns; });
  int64_t total = 0;
  for (; i != v.end() && i->start_ns < end; ++i) {
    total += std::min(end, i->end_ns) - std::max(start, i->start_ns);
  }
  return total;
}

ReplayResult Replay(const StepGraph& graph, const StepEdit& edit) {
  return Replayer(graph, edit).Run();
}

}  // namespace gpuspy::analysis::replay
