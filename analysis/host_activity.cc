#include "analysis/host_activity.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "analysis/idle_attribution.h"
#include "model/python_frame.h"

namespace gpuspy::analysis {
namespace {

struct Owned {
  Interval span;
  StringRef name;
};

// Who owns an instant of a thread's time: the outermost ATen op open then (what the user's code
// called: aten::unflatten_dense_tensors, not the aten::empty inside it), else the innermost range
// (a Python frame, a record_function annotation, an NVTX range).
const NvtxRangeEvent* Owner(const std::vector<const NvtxRangeEvent*>& open, StringRef cpu_op) {
  for (const NvtxRangeEvent* r : open) {
    if (r->domain == cpu_op) return r;
  }
  return open.back();
}

// Splits a thread's (properly nested) ranges into the stretches each range owns, in time order.
std::vector<Owned> OwnedStretches(std::vector<const NvtxRangeEvent*> ranges, StringRef cpu_op) {
  std::sort(ranges.begin(), ranges.end(), [](const NvtxRangeEvent* a, const NvtxRangeEvent* b) {
    return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns > b->end_ns;
  });
  std::vector<Owned> out;
  std::vector<const NvtxRangeEvent*> open;
  int64_t t = ranges.empty() ? 0 : ranges.front()->start_ns;
  auto advance_to = [&](int64_t until) {
    // Close every range that ends before `until`, crediting the owner as time passes.
    while (!open.empty() && open.back()->end_ns <= until) {
      const NvtxRangeEvent* top = open.back();
      if (top->end_ns > t) out.push_back({{t, top->end_ns}, Owner(open, cpu_op)->message});
      t = std::max(t, top->end_ns);
      open.pop_back();
    }
    if (!open.empty() && until > t) out.push_back({{t, until}, Owner(open, cpu_op)->message});
    t = std::max(t, until);
  };
  for (const NvtxRangeEvent* r : ranges) {
    advance_to(r->start_ns);
    open.push_back(r);  // one overlapping its parent's end (not nested) is cut there
  }
  advance_to(INT64_MAX);
  return out;
}

}  // namespace

HotLines HotLinesDuring(const EventColumns& ev, const StringTable& strings, const IntervalSet& gaps,
                        size_t top) {
  HotLines out;
  const StringRef domain = strings.Find(kHostSampleDomain);
  if (domain == 0 || gaps.empty()) return out;
  std::vector<int64_t> at;
  absl::flat_hash_map<StringRef, uint32_t> per_site;
  const std::vector<Interval>& g = gaps.intervals();  // sorted, disjoint
  for (const NvtxMarkEvent& m : ev.nvtx_marks) {
    if (m.domain != domain || m.message == 0) continue;
    auto it = std::upper_bound(g.begin(), g.end(), m.timestamp_ns,
                               [](int64_t t, const Interval& i) { return t < i.end_ns; });
    if (it == g.end() || m.timestamp_ns < it->start_ns) continue;
    ++per_site[m.message];
    ++out.samples;
  }
  if (out.samples == 0) return out;
  const int64_t total = gaps.TotalLength();
  for (const auto& [ref, n] : per_site) {
    out.lines.push_back({std::string(strings.Get(ref)), n,
                         static_cast<int64_t>(static_cast<double>(total) * n / out.samples)});
  }
  std::sort(out.lines.begin(), out.lines.end(), [](const HotLine& a, const HotLine& b) {
    return a.samples != b.samples ? a.samples > b.samples : a.site < b.site;
  });
  if (out.lines.size() > top) out.lines.resize(top);
  return out;
}

GapNeighbours CallsAround(const EventColumns& ev, Interval gap) {
  GapNeighbours n;
  for (const ApiEvent& a : ev.apis) {
    if (a.end_ns <= gap.start_ns && (n.before == nullptr || a.end_ns > n.before->end_ns)) n.before = &a;
    if (a.start_ns >= gap.end_ns && (n.after == nullptr || a.start_ns < n.after->start_ns)) n.after = &a;
  }
  return n;
}

std::vector<HostActivity> HostActivityDuring(const EventColumns& ev, const StringTable& strings,
                                             Interval window, const IntervalSet& gaps, size_t top,
                                             HostView view) {
  if (gaps.empty()) return {};
  // The thread each gap waited for: the one whose CUDA call started last before the gap ended.
  std::vector<const ApiEvent*> calls;
  absl::flat_hash_map<uint32_t, uint64_t> calls_per_thread;
  for (const ApiEvent& a : ev.apis) {
    if (a.start_ns < window.end_ns && a.end_ns > window.start_ns) {
      calls.push_back(&a);
      ++calls_per_thread[a.thread_id];
    }
  }
  std::sort(calls.begin(), calls.end(),
            [](const ApiEvent* a, const ApiEvent* b) { return a->start_ns < b->start_ns; });
  uint32_t busiest = 0;
  uint64_t most = 0;
  for (const auto& [tid, n] : calls_per_thread) {
    if (n > most || (n == most && tid < busiest)) {
      busiest = tid;
      most = n;
    }
  }
  absl::flat_hash_map<uint32_t, std::vector<Interval>> gaps_by_thread;
  for (const Interval& g : gaps.intervals()) {
    auto it = std::upper_bound(calls.begin(), calls.end(), g.end_ns,
                               [](int64_t t, const ApiEvent* a) { return t < a->start_ns; });
    const uint32_t tid = it == calls.begin() ? busiest : (*(it - 1))->thread_id;
    gaps_by_thread[tid].push_back(g);
  }

  absl::flat_hash_map<uint32_t, std::vector<const NvtxRangeEvent*>> ranges_by_thread;
  // kUserLines: each user-code frame's call site (0: a library's frame, left out).
  const StringRef python = strings.Find(kPythonFunctionDomain);
  absl::flat_hash_map<StringRef, std::string> site_of;
  const auto user_site = [&](StringRef frame) -> const std::string& {
    auto [it, fresh] = site_of.try_emplace(frame);
    if (fresh) it->second = UserCallSite(strings.Get(frame));
    return it->second;
  };
  ActivityRangeFilter is_activity(strings, window);
  for (const NvtxRangeEvent& r : ev.nvtx_ranges) {
    if (!gaps_by_thread.contains(r.thread_id)) continue;
    const bool wanted = view == HostView::kActivity
                            ? is_activity(r)
                            : python != 0 && r.domain == python && !user_site(r.message).empty();
    if (wanted) ranges_by_thread[r.thread_id].push_back(&r);
  }
  // kUserLines: no ATen op is the owner, the innermost user frame is.
  const StringRef cpu_op = view == HostView::kActivity ? strings.Find(kCpuOpDomain) : 0;
  absl::flat_hash_map<StringRef, HostActivity> by_name;
  for (auto& [tid, thread_gaps] : gaps_by_thread) {
    auto ranges = ranges_by_thread.find(tid);
    if (ranges == ranges_by_thread.end()) continue;
    const IntervalSet waited = IntervalSet::Union(thread_gaps);
    const std::vector<Interval>& g = waited.intervals();
    size_t first = 0;  // stretches come in time order and do not overlap: one merge pass
    for (const Owned& o : OwnedStretches(std::move(ranges->second), cpu_op)) {
      while (first < g.size() && g[first].end_ns <= o.span.start_ns) ++first;
      int64_t ns = 0;
      for (size_t k = first; k < g.size() && g[k].start_ns < o.span.end_ns; ++k) {
        ns += std::min(g[k].end_ns, o.span.end_ns) - std::max(g[k].start_ns, o.span.start_ns);
      }
      if (ns > 0) by_name[o.name].ns += ns;
    }
  }
  std::vector<HostActivity> out;
  for (auto& [name, h] : by_name) {
    h.name = view == HostView::kActivity ? std::string(strings.Get(name)) : user_site(name);
    out.push_back(std::move(h));
  }
  std::sort(out.begin(), out.end(), [](const HostActivity& a, const HostActivity& b) {
    return a.ns != b.ns ? a.ns > b.ns : a.name < b.name;
  });
  if (out.size() > top) out.resize(top);
  return out;
}

}  // namespace gpuspy::analysis
