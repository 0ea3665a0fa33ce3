// Stage timings (--timings: the reader's stages and the offline analysis): a steady clock in
// nanoseconds.
#pragma once

#include <chrono>
#include <cstdint>

namespace gpuspy::importers {

inline int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace gpuspy::importers
