// CLOCK_MONOTONIC in nanoseconds, straight from clock_gettime (vDSO, no lock, async-signal-safe):
// what the call-site walk and the host sampler time their own cost with, inside the profiled
// process's hot paths.
#pragma once

#include <time.h>

#include <cstdint>

namespace gpuspy::inject {

inline uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace gpuspy::inject
