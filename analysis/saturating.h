// Saturating int64 arithmetic for timestamps that come from outside (a hostile or broken
// producer can send any int64): differences of two ranks' clocks must not overflow (UB).
#pragma once

#include <cstdint>
#include <limits>

namespace gpuspy::analysis {

inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t out;
  if (!__builtin_add_overflow(a, b, &out)) return out;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

inline int64_t SatSub(int64_t a, int64_t b) {
  int64_t out;
  if (!__builtin_sub_overflow(a, b, &out)) return out;
  return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

}  // namespace gpuspy::analysis
