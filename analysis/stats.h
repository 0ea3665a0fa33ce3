// The one definition of a sample's median and percentiles for every figure of a report: a step's
// kernel median and p90, a job's median step, a rank's medians, the median lost time of a
// finding, the diff's step-time statistics. The screens show what these return and compute none
// of their own, so "median" means the same value on every one of them.
//
// Percentiles are nearest-rank on the sorted sample: the element at round(p * (n - 1)). The
// value is always one that was measured (a step that happened, not the mean of two), and the
// median of an even sample is the upper of the two middle values.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace gpuspy::stats {

// The index of the p-th percentile (0 <= p <= 1) in a sorted sample of n > 0 values.
inline size_t PercentileIndex(size_t n, double p) {
  const double clamped = std::clamp(p, 0.0, 1.0);
  return std::min(n - 1, static_cast<size_t>(clamped * static_cast<double>(n - 1) + 0.5));
}

// The p-th percentile of an unsorted sample (taken by value: the caller's order is kept); T{} for
// an empty sample.
template <typename T>
T Percentile(std::vector<T> v, double p) {
  if (v.empty()) return T{};
  const size_t k = PercentileIndex(v.size(), p);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

template <typename T>
T Median(std::vector<T> v) {
  return Percentile(std::move(v), 0.5);
}

// The lower of the two middle values of an even sample. For comparing one member against the
// others' typical value where the upper median would be that member itself (two ranks: the
// upper median of two step times is the slow rank's own).
template <typename T>
T LowerMedian(std::vector<T> v) {
  if (v.empty()) return T{};
  const size_t k = (v.size() - 1) / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace gpuspy::stats
