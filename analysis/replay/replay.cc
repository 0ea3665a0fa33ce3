#include "analysis/replay/replay.h"

#include <algorithm>
#include <deque>
#include <utility>
#include <vector>

namespace gpuspy::analysis::replay {
namespace {

// Each call and each op of each copy of the step has a start node and an end node; a node's
// time is computed once every node it depends on is known (Kahn's order over the DAG).
//
// Copies: a steady step is one period of a loop. Replaying `copies` copies of it back to back,
// each host thread picking up where it left the previous copy and each stream's work queuing
// behind the previous copy's, lets an edit change the work the step inherits from the step before
// (what a host blocked on at the step's start, the backlog a GPU-bound loop carries), which a
// single window with its inherited work frozen cannot. Work the recording shows carried into the
// window stands for the previous copy's last work on its stream.
class Replayer {
 public:
  Replayer(const StepGraph& g, const StepEdit& e, int copies)
      : g_(g), e_(e), copies_(std::max(1, copies)), period_(g.window.length()) {
    int n = 0;
    for (size_t t = 0; t < g.threads.size(); ++t) {
      call_base_.push_back(n);
      n += static_cast<int>(g.threads[t].calls.size());
      call_thread_.resize(n, static_cast<int>(t));
    }
    calls_ = n;
    per_copy_ = 2 * (n + static_cast<int>(g.ops.size()));
    nodes_ = per_copy_ * copies_;
    time_.assign(nodes_, 0);
    // The edit, dense: looked up for every node of every copy.
    call_cost_.assign(calls_, -1);
    for (const auto& [call, cost] : e.call_cost) {
      if (call.first >= 0 && call.first < static_cast<int>(g.threads.size()) && call.second >= 0 &&
          call.second < static_cast<int>(g.threads[call.first].calls.size())) {
        call_cost_[call_base_[call.first] + call.second] = cost;
      }
    }
    op_duration_.resize(g.ops.size());
    detached_.assign(g.ops.size(), 0);
    for (size_t i = 0; i < g.ops.size(); ++i) op_duration_[i] = g.ops[i].duration_ns();
    for (const auto& [op, ns] : e.op_duration) {
      if (op >= 0 && op < static_cast<int>(g.ops.size())) op_duration_[op] = ns;
    }
    for (int op : e.detached_ops) {
      if (op >= 0 && op < static_cast<int>(g.ops.size())) detached_[op] = 1;
    }
    gaps_.resize(calls_);
    for (size_t t = 0; t < g.threads.size(); ++t) {
      for (size_t c = 0; c < g.threads[t].calls.size(); ++c) {
        gaps_[call_base_[t] + c] = GapOf(static_cast<int>(t), static_cast<int>(c));
      }
    }
    effective_prev_.assign(g.ops.size(), -1);
    for (size_t i = 0; i < g.ops.size(); ++i) {
      // Work moved to a side stream leaves its stream: the next op waits for the one before it.
      int prev = g.ops[i].prev_on_stream;
      while (prev >= 0 && e.detached_ops.contains(prev)) prev = g.ops[prev].prev_on_stream;
      effective_prev_[i] = e.detached_ops.contains(static_cast<int>(i)) ? -1 : prev;
    }
    last_launched_.assign(g.streams.size(), -1);
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const GpuOp& op = g.ops[i];
      if (op.carried() || e.detached_ops.contains(static_cast<int>(i))) continue;
      int& last = last_launched_[op.stream];
      if (last < 0 || op.start_ns > g.ops[last].start_ns) last = static_cast<int>(i);
    }
  }

  ReplayResult Run() {
    ReplayResult r;
    const std::vector<int>* order = Order();
    if (order == nullptr) {
      r.error = "the recorded order is not causal (a dependency cycle in the step's graph)";
      return r;
    }
    for (int v : *order) time_[v] = Compute(v);
    r.ok = true;
    if (copies_ == 1) {
      r.host_end_ns = ThreadEnd(0, g_.main_thread);
      r.gpu_end_ns = GpuEnd(0) - std::max<int64_t>(0, g_.gpu_spill_ns);
      r.step_ns = std::max(r.host_end_ns, r.gpu_end_ns) - g_.window.start_ns;
      return r;
    }
    // The steady period: the last copy against the one before, on the host and on the GPU (a
    // loop that never waits for the GPU is paced by the GPU all the same: its queue fills).
    const int k = copies_ - 1;
    r.host_end_ns = ThreadEnd(k, g_.main_thread);
    r.gpu_end_ns = GpuEnd(k);
    const int64_t host_period = r.host_end_ns - ThreadEnd(k - 1, g_.main_thread);
    const int64_t gpu_period = g_.launched_ops() > 0 ? r.gpu_end_ns - GpuEnd(k - 1) : 0;
    r.step_ns = std::max(host_period, gpu_period);
    return r;
  }

 private:
  enum class Kind : uint8_t { kCallStart, kCallEnd, kOpStart, kOpEnd };
  struct Node {
    Kind kind = Kind::kCallStart;
    int k = 0;  // copy
    int a = 0;  // thread, or op
    int b = 0;  // call
  };

  // The evaluation order: Kahn's over the unedited graph's dependencies, once per graph and
  // number of copies (StepGraph::replay_order); null on a cycle.
  const std::vector<int>* Order() {
    if (auto it = g_.replay_order.find(copies_); it != g_.replay_order.end()) {
      return it->second.size() == static_cast<size_t>(nodes_) ? &it->second : nullptr;
    }
    static const StepEdit kUnedited;
    Replayer unedited(g_, kUnedited, copies_);
    unedited.Link();
    // Each node's dependents, in the order Link found them (compressed rows: one vector per node
    // was tens of thousands of allocations per step).
    std::vector<int> first(nodes_ + 1, 0);
    for (const auto& [from, to] : unedited.edges_) ++first[from + 1];
    for (int v = 0; v < nodes_; ++v) first[v + 1] += first[v];
    std::vector<int> dependents(unedited.edges_.size());
    std::vector<int> at(first.begin(), first.end() - 1);
    for (const auto& [from, to] : unedited.edges_) dependents[at[from]++] = to;
    std::vector<int> order;
    order.reserve(nodes_);
    std::deque<int> ready;
    for (int v = 0; v < nodes_; ++v) {
      if (unedited.pending_[v] == 0) ready.push_back(v);
    }
    while (!ready.empty()) {
      const int v = ready.front();
      ready.pop_front();
      order.push_back(v);
      for (int j = first[v]; j < first[v + 1]; ++j) {
        if (--unedited.pending_[dependents[j]] == 0) ready.push_back(dependents[j]);
      }
    }
    std::vector<int>& cached = g_.replay_order[copies_] = std::move(order);
    return cached.size() == static_cast<size_t>(nodes_) ? &cached : nullptr;
  }

  int CallStart(int k, int t, int c) const { return k * per_copy_ + 2 * (call_base_[t] + c); }
  int CallEnd(int k, int t, int c) const { return CallStart(k, t, c) + 1; }
  int OpStart(int k, int i) const { return k * per_copy_ + 2 * (calls_ + i); }
  int OpEnd(int k, int i) const { return OpStart(k, i) + 1; }
  int64_t Shift(int k) const { return static_cast<int64_t>(k) * period_; }

  void Edge(int from, int to) {
    edges_.emplace_back(from, to);
    ++pending_[to];
  }

  // Op `j` as copy `k` sees it: the op itself, or for carried work the previous copy's last work
  // on that stream. `node` is -1 when it is fixed at `recorded` (the first copy's carried work).
  struct Ref {
    int node = -1;
    int64_t recorded = 0;  // in the frame of the recording shifted to copy k
  };
  Ref RefTo(int k, int j) const {
    const GpuOp& op = g_.ops[j];
    if (!op.carried()) return {OpEnd(k, j), op.end_ns + Shift(k)};
    const int last = last_launched_[op.stream];
    if (k > 0 && last >= 0) return {OpEnd(k - 1, last), g_.ops[last].end_ns + Shift(k - 1)};
    // Nothing of the step's own runs on that stream: the carried work keeps its place relative
    // to the copy's start.
    return {OpEnd(k, j), op.end_ns + Shift(k)};
  }
  int64_t ValueOf(const Ref& r) const { return r.node < 0 ? r.recorded : time_[r.node]; }

  bool MainHasCalls() const {
    return g_.main_thread >= 0 && !g_.threads[g_.main_thread].calls.empty();
  }
  int LastMainCall() const { return static_cast<int>(g_.threads[g_.main_thread].calls.size()) - 1; }

  bool Unblocked(int t, int c) const { return call_cost_[call_base_[t] + c] >= 0; }
  bool Detached(int i) const { return detached_[i] != 0; }

  // What a blocking call waits for in copy k (-1: nothing: unedited cost, or unblocked).
  int WaitTarget(int t, int c) const {
    const int w = g_.threads[t].calls[c].waits_for;
    if (w < 0 || Unblocked(t, c) || Detached(w)) return -1;
    return w;
  }

  int Dependency(int i) const {
    const int d = g_.ops[i].dependency;
    if (d < 0 || Detached(d) || Detached(i)) return -1;
    return d;
  }

  // The op before op i on its stream, as copy k sees it.
  bool PrevRef(int k, int i, Ref* out) const {
    const int p = effective_prev_[i];
    if (p >= 0) {
      *out = RefTo(k, p);
      return true;
    }
    // The first work on its stream queues behind the previous copy's last.
    const int last = last_launched_[g_.ops[i].stream];
    if (k > 0 && last >= 0 && !Detached(i)) {
      *out = {OpEnd(k - 1, last), g_.ops[last].end_ns + Shift(k - 1)};
      return true;
    }
    return false;
  }

  // What node v is: its copy, and which call's or op's start or end (the layout of CallStart..
  // OpEnd above), decoded rather than tabled: a table of every node was filled for every replay.
  Node NodeAt(int v) const {
    const int k = v / per_copy_;
    const int r = v - k * per_copy_;
    const bool end = (r & 1) != 0;
    const int i = r >> 1;
    if (i >= calls_) return {end ? Kind::kOpEnd : Kind::kOpStart, k, i - calls_, 0};
    const int t = call_thread_[i];
    return {end ? Kind::kCallEnd : Kind::kCallStart, k, t, i - call_base_[t]};
  }

  void Link() {
    pending_.assign(nodes_, 0);
    edges_.clear();
    for (int k = 0; k < copies_; ++k) {
      for (size_t t = 0; t < g_.threads.size(); ++t) {
        const auto& calls = g_.threads[t].calls;
        const int ti = static_cast<int>(t);
        for (size_t c = 0; c < calls.size(); ++c) {
          const int ci = static_cast<int>(c);
          if (c > 0) {
            Edge(CallEnd(k, ti, ci - 1), CallStart(k, ti, ci));
          } else if (k > 0) {
            Edge(CallEnd(k - 1, ti, static_cast<int>(calls.size()) - 1), CallStart(k, ti, ci));
          }
          Edge(CallStart(k, ti, ci), CallEnd(k, ti, ci));
          if (const auto [ht, hc] = calls[c].handoff; ht >= 0) Edge(CallEnd(k, ht, hc), CallStart(k, ti, ci));
          if (const int w = WaitTarget(ti, ci); w >= 0) {
            if (const Ref r = RefTo(k, w); r.node >= 0) Edge(r.node, CallEnd(k, ti, ci));
          }
        }
      }
      for (int i = 0; i < static_cast<int>(g_.ops.size()); ++i) {
        const GpuOp& op = g_.ops[i];
        Edge(OpStart(k, i), OpEnd(k, i));
        if (op.carried()) {
          // Carried work keeps its place relative to where the copy starts (the main thread's end
          // of the copy before).
          if (k > 0 && MainHasCalls()) Edge(CallEnd(k - 1, g_.main_thread, LastMainCall()), OpStart(k, i));
          continue;
        }
        Edge(CallStart(k, op.thread, op.call), OpStart(k, i));
        if (Ref r; PrevRef(k, i, &r) && r.node >= 0) Edge(r.node, OpStart(k, i));
        if (const int d = Dependency(i); d >= 0) {
          if (const Ref r = RefTo(k, d); r.node >= 0) Edge(r.node, OpStart(k, i));
        }
      }
    }
  }

  int64_t Gap(int t, int c) const { return gaps_[call_base_[t] + c]; }

  int64_t GapOf(int t, int c) const {
    const HostThread& th = g_.threads[t];
    const int64_t from = c == 0 ? g_.window.start_ns : th.calls[c - 1].end_ns;
    const int64_t to = th.calls[c].start_ns;
    return std::max<int64_t>(0, to - from - e_.RemovedWithin(th.thread_id, from, to));
  }

  int64_t Compute(int v) const {
    const Node n = NodeAt(v);
    switch (n.kind) {
      case Kind::kCallStart: {
        const HostCall& call = g_.threads[n.a].calls[n.b];
        int64_t start;
        if (call.waited_before) {
          // Waiting is no work: the call starts when it is handed off (below), not before its
          // thread's previous call ended.
          const int last = static_cast<int>(g_.threads[n.a].calls.size()) - 1;
          start = n.b > 0 ? time_[CallEnd(n.k, n.a, n.b - 1)]
                          : (n.k == 0 ? g_.window.start_ns : time_[CallEnd(n.k - 1, n.a, last)]);
        } else {
          const int64_t from = n.b == 0 ? (n.k == 0 ? g_.window.start_ns : ThreadEnd(n.k - 1, n.a))
                                        : time_[CallEnd(n.k, n.a, n.b - 1)];
          start = from + Gap(n.a, n.b);
        }
        // Handed off by another thread: not before that thread's call ends (plus the recorded
        // hand-off latency).
        if (const auto [ht, hc] = call.handoff; ht >= 0) {
          const HostCall& other = g_.threads[ht].calls[hc];
          start = std::max(start, time_[CallEnd(n.k, ht, hc)] + (call.start_ns - other.end_ns));
        }
        return start;
      }
      case Kind::kCallEnd: {
        const HostCall& call = g_.threads[n.a].calls[n.b];
        const int64_t start = time_[CallStart(n.k, n.a, n.b)];
        if (const int64_t cost = call_cost_[call_base_[n.a] + n.b]; cost >= 0) return start + cost;
        const int w = WaitTarget(n.a, n.b);
        if (w < 0) {
          const bool was_waiting = call.waits_for >= 0;  // its wait went with a detached op
          return start + (was_waiting ? std::min(call.duration_ns(), kBlockingCallFloorNs)
                                      : call.duration_ns());
        }
        const Ref r = RefTo(n.k, w);
        return std::max(start + std::min(call.duration_ns(), kBlockingCallFloorNs),
                        ValueOf(r) + (call.end_ns + Shift(n.k) - r.recorded));
      }
      case Kind::kOpStart:
        return OpStartTime(n.k, n.a);
      case Kind::kOpEnd: {
        return time_[OpStart(n.k, n.a)] + op_duration_[n.a];
      }
    }
    return 0;
  }

  // The op starts when its latest constraint allows, keeping the recorded slack after the
  // constraint that bound it; constraints that did not bind may bind now, less any recorded
  // excess over the op's start (timestamps that overlap by a little).
  int64_t OpStartTime(int k, int i) const {
    const GpuOp& op = g_.ops[i];
    const int64_t start_rec = op.start_ns + Shift(k);
    if (op.carried()) {
      if (k == 0 || !MainHasCalls()) return start_rec;
      return op.start_ns + (ThreadEnd(k - 1, g_.main_thread) - g_.window.start_ns);
    }
    struct Constraint {
      int64_t recorded;
      int64_t replayed;
    };
    Constraint cs[3];
    int n = 0;
    const int64_t api_start = g_.threads[op.thread].calls[op.call].start_ns;
    const int64_t latency = std::min(g_.launch_latency_ns, op.start_ns - api_start);
    cs[n++] = {api_start + Shift(k) + latency, time_[CallStart(k, op.thread, op.call)] + latency};
    if (Ref r; PrevRef(k, i, &r)) cs[n++] = {r.recorded, ValueOf(r)};
    if (const int d = Dependency(i); d >= 0) {
      const Ref r = RefTo(k, d);
      cs[n++] = {r.recorded, ValueOf(r)};
    }
    int binding = 0;
    for (int j = 1; j < n; ++j) {
      if (cs[j].recorded > cs[binding].recorded) binding = j;
    }
    int64_t start = cs[binding].replayed + (start_rec - cs[binding].recorded);
    for (int j = 0; j < n; ++j) {
      if (j == binding) continue;
      start = std::max(start, cs[j].replayed - std::max<int64_t>(0, cs[j].recorded - start_rec));
    }
    return start;
  }

  // Where thread t is when it reaches the window's end in copy k.
  int64_t ThreadEnd(int k, int t) const {
    const int64_t end = g_.window.end_ns;
    if (t < 0) return end + Shift(k);  // no CUDA calls: the host's time is as recorded
    const HostThread& th = g_.threads[t];
    const int last = static_cast<int>(th.calls.size()) - 1;
    const HostCall& call = th.calls[last];
    const int64_t last_end = time_[CallEnd(k, t, last)];
    if (call.end_ns > end) return last_end - (call.end_ns - end);
    if (g_.host_tail_unrecorded && t == g_.main_thread) return last_end;
    return last_end + std::max<int64_t>(
                          0, end - call.end_ns - e_.RemovedWithin(th.thread_id, call.end_ns, end));
  }

  int64_t GpuEnd(int k) const {
    int64_t end = k == 0 ? g_.window.start_ns : GpuEnd(k - 1);
    for (size_t i = 0; i < g_.ops.size(); ++i) {
      if (!g_.ops[i].carried()) end = std::max(end, time_[OpEnd(k, static_cast<int>(i))]);
    }
    return end;
  }

  const StepGraph& g_;
  const StepEdit& e_;
  const int copies_;
  const int64_t period_;  // the recorded step: copy k's recorded frame is shifted by k of these
  std::vector<int> call_base_;
  std::vector<int> call_thread_;  // per flattened call: its thread
  int calls_ = 0;
  int per_copy_ = 0;
  int nodes_ = 0;
  std::vector<int64_t> time_;
  std::vector<int> pending_;
  std::vector<std::pair<int, int>> edges_;  // {from, to}: `to` waits for `from`
  std::vector<int> effective_prev_;
  std::vector<int> last_launched_;  // per stream: the last launched op in stream order
  // The edit, dense (StepEdit's maps, looked up once).
  std::vector<int64_t> call_cost_;    // per flattened call; -1: as recorded
  std::vector<int64_t> op_duration_;  // per op
  std::vector<char> detached_;        // per op
  std::vector<int64_t> gaps_;         // per flattened call: the host work before it, edited
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

ReplayResult Replay(const StepGraph& graph, const StepEdit& edit, int copies) {
  return Replayer(graph, edit, copies).Run();
}

}  // namespace gpuspy::analysis::replay
