// Interval arithmetic over [start, end) nanosecond spans: the basis of every "busy"/"idle"/
// "overlapped" figure, which must count concurrent work once (union), not sum it.
#pragma once

#include <cstdint>
#include <vector>

namespace gpuspy::analysis {

struct Interval {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t length() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

// Whether an event belongs to a window: a span must overlap it (one that ends exactly where the
// window starts belongs to the window before); a point event (start == end) must lie inside it.
inline bool InWindow(int64_t start, int64_t end, Interval w) {
  return start < w.end_ns && (end > w.start_ns || (start == end && start >= w.start_ns));
}

// Sorted, non-overlapping, non-empty intervals.
class IntervalSet {
 public:
  IntervalSet() = default;
  // Builds the union of arbitrary (unsorted, overlapping, possibly empty) intervals.
  static IntervalSet Union(std::vector<Interval> intervals);

  // Clips every interval to `window`.
  IntervalSet Clip(Interval window) const;
  IntervalSet Intersect(const IntervalSet& other) const;
  // Parts of this set not covered by `other`.
  IntervalSet Subtract(const IntervalSet& other) const;
  // The complement of this set within `window`.
  IntervalSet GapsWithin(Interval window) const;

  int64_t TotalLength() const;
  const std::vector<Interval>& intervals() const { return intervals_; }
  bool empty() const { return intervals_.empty(); }

 private:
  std::vector<Interval> intervals_;
};

}  // namespace gpuspy::analysis
