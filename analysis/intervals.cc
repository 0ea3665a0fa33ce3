#include "analysis/intervals.h"

#include <algorithm>
#include <utility>

namespace gpuspy::analysis {

IntervalSet IntervalSet::Union(std::vector<Interval> in) {
  std::erase_if(in, [](const Interval& i) { return i.end_ns <= i.start_ns; });
  // Most callers collect intervals in time order already (a step's events, gaps, ranges): a
  // check is one pass where the sort was most of a union. The union does not depend on the order
  // of intervals that start together.
  const auto by_start = [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; };
  if (!std::is_sorted(in.begin(), in.end(), by_start)) std::sort(in.begin(), in.end(), by_start);
  // Merged in place: the set keeps the input's storage.
  size_t kept = 0;
  for (const Interval& i : in) {
    if (kept > 0 && i.start_ns <= in[kept - 1].end_ns) {
      in[kept - 1].end_ns = std::max(in[kept - 1].end_ns, i.end_ns);
    } else {
      in[kept++] = i;
    }
  }
  in.resize(kept);
  IntervalSet out;
  out.intervals_ = std::move(in);
  return out;
}

IntervalSet IntervalSet::Clip(Interval w) const {
  IntervalSet out;
  for (const Interval& i : intervals_) {
    Interval c{std::max(i.start_ns, w.start_ns), std::min(i.end_ns, w.end_ns)};
    if (c.end_ns > c.start_ns) out.intervals_.push_back(c);
  }
  return out;
}

IntervalSet IntervalSet::Intersect(const IntervalSet& other) const {
  IntervalSet out;
  size_t a = 0, b = 0;
  const auto& x = intervals_;
  const auto& y = other.intervals_;
  while (a < x.size() && b < y.size()) {
    const int64_t lo = std::max(x[a].start_ns, y[b].start_ns);
    const int64_t hi = std::min(x[a].end_ns, y[b].end_ns);
    if (hi > lo) out.intervals_.push_back({lo, hi});
    if (x[a].end_ns < y[b].end_ns) {
      ++a;
    } else {
      ++b;
    }
  }
  return out;
}

IntervalSet IntervalSet::Subtract(const IntervalSet& other) const {
  IntervalSet out;
  size_t b = 0;
  const auto& y = other.intervals_;
  for (Interval cur : intervals_) {
    while (b < y.size() && y[b].end_ns <= cur.start_ns) ++b;
    size_t k = b;
    while (k < y.size() && y[k].start_ns < cur.end_ns) {
      if (y[k].start_ns > cur.start_ns) out.intervals_.push_back({cur.start_ns, y[k].start_ns});
      cur.start_ns = std::max(cur.start_ns, y[k].end_ns);
      if (cur.start_ns >= cur.end_ns) break;
      ++k;
    }
    if (cur.end_ns > cur.start_ns) out.intervals_.push_back(cur);
  }
  return out;
}

IntervalSet IntervalSet::GapsWithin(Interval window) const {
  IntervalSet whole;
  if (window.end_ns > window.start_ns) whole.intervals_.push_back(window);
  return whole.Subtract(*this);
}

int64_t IntervalSet::TotalLength() const {
  int64_t total = 0;
  for (const Interval& i : intervals_) total += i.length();
  return total;
}

}  // namespace gpuspy::analysis
