#include "analysis/host_activity.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "analysis/idle_attribution.h"
#include "model/python_frame.h"

namespace gpuspy::analysis {
namespace {

using Stretch = HostActivityIndex::Stretch;

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
std::vector<Stretch> OwnedStretches(std::vector<const NvtxRangeEvent*> ranges, StringRef cpu_op) {
  std::sort(ranges.begin(), ranges.end(), [](const NvtxRangeEvent* a, const NvtxRangeEvent* b) {
    return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns > b->end_ns;
  });
  std::vector<Stretch> out;
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
  return HostActivityIndex(ev, strings, window).During(gaps, top, view);
}

void HostActivityIndex::SortCalls() {
  if (calls_sorted_) return;
  calls_sorted_ = true;
  absl::flat_hash_map<uint32_t, uint64_t> calls_per_thread;
  for (const ApiEvent& a : events_.apis) {
    if (a.start_ns < window_.end_ns && a.end_ns > window_.start_ns) {
      calls_.push_back(&a);
      ++calls_per_thread[a.thread_id];
    }
  }
  std::sort(calls_.begin(), calls_.end(),
            [](const ApiEvent* a, const ApiEvent* b) { return a->start_ns < b->start_ns; });
  uint64_t most = 0;
  for (const auto& [tid, n] : calls_per_thread) {
    if (n > most || (n == most && tid < busiest_)) {
      busiest_ = tid;
      most = n;
    }
  }
}

// kUserLines: each user-code frame's call site ("": a library's frame, left out).
const std::string& HostActivityIndex::UserSite(StringRef frame) {
  auto [it, fresh] = site_of_.try_emplace(frame);
  if (fresh) it->second = UserCallSite(strings_.Get(frame));
  return it->second;
}

const std::vector<HostActivityIndex::Stretch>& HostActivityIndex::StretchesOf(uint32_t thread_id,
                                                                              HostView view) {
  auto [it, fresh] = stretches_.try_emplace({view, thread_id});
  if (!fresh) return it->second;
  const StringRef python = strings_.Find(kPythonFunctionDomain);
  ActivityRangeFilter is_activity(strings_, window_);
  std::vector<const NvtxRangeEvent*> ranges;
  for (const NvtxRangeEvent& r : events_.nvtx_ranges) {
    if (r.thread_id != thread_id) continue;
    const bool wanted = view == HostView::kActivity
                            ? is_activity(r)
                            : python != 0 && r.domain == python && !UserSite(r.message).empty();
    if (wanted) ranges.push_back(&r);
  }
  // kUserLines: no ATen op is the owner, the innermost user frame is.
  const StringRef cpu_op = view == HostView::kActivity ? strings_.Find(kCpuOpDomain) : 0;
  if (!ranges.empty()) it->second = OwnedStretches(std::move(ranges), cpu_op);
  return it->second;
}

std::vector<HostActivity> HostActivityIndex::During(const IntervalSet& gaps, size_t top, HostView view) {
  if (gaps.empty()) return {};
  SortCalls();
  // The thread each gap waited for: the one whose CUDA call started last before the gap ended.
  // Gaps come in time order (a step has thousands): one pass over the calls finds them all.
  absl::flat_hash_map<uint32_t, std::vector<Interval>> gaps_by_thread;
  size_t after = 0;  // the first call starting after the gap's end
  for (const Interval& g : gaps.intervals()) {
    while (after < calls_.size() && calls_[after]->start_ns <= g.end_ns) ++after;
    const uint32_t tid = after == 0 ? busiest_ : calls_[after - 1]->thread_id;
    gaps_by_thread[tid].push_back(g);
  }
  absl::flat_hash_map<StringRef, HostActivity> by_name;
  for (auto& [tid, thread_gaps] : gaps_by_thread) {
    const std::vector<Stretch>& stretches = StretchesOf(tid, view);
    if (stretches.empty()) continue;
    // Stretches and gaps both come in time order, and neither overlaps its own kind: one merge
    // pass (a stretch that runs past a gap's end stays for the next gap).
    const IntervalSet waited = IntervalSet::Union(thread_gaps);
    size_t first = 0;  // the first stretch ending after the gap's start
    for (const Interval& g : waited.intervals()) {
      while (first < stretches.size() && stretches[first].span.end_ns <= g.start_ns) ++first;
      for (size_t o = first; o < stretches.size() && stretches[o].span.start_ns < g.end_ns; ++o) {
        const Interval& x = stretches[o].span;
        by_name[stretches[o].name].ns += std::min(g.end_ns, x.end_ns) - std::max(g.start_ns, x.start_ns);
      }
    }
  }
  std::vector<HostActivity> out;
  for (auto& [name, h] : by_name) {
    h.name = view == HostView::kActivity ? std::string(strings_.Get(name)) : UserSite(name);
    out.push_back(std::move(h));
  }
  std::sort(out.begin(), out.end(), [](const HostActivity& a, const HostActivity& b) {
    return a.ns != b.ns ? a.ns > b.ns : a.name < b.name;
  });
  if (out.size() > top) out.resize(top);
  return out;
}

}  // namespace gpuspy::analysis
