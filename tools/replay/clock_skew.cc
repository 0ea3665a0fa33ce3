#include "tools/replay/clock_skew.h"

namespace gpuspy::synthetic {
namespace {

// SplitMix64's finalizer: a well-mixed value per (seed, rank), stable across platforms (unlike
// std::uniform_int_distribution).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <typename T>
void ShiftSpans(std::vector<T>* v, int64_t d) {
  for (T& e : *v) e.start_ns += d, e.end_ns += d;
}

template <typename T>
void ShiftPoints(std::vector<T>* v, int64_t d) {
  for (T& e : *v) e.timestamp_ns += d;
}

}  // namespace

int64_t DeterministicClockOffsetNs(uint64_t seed, int rank, int64_t max_abs_ns) {
  if (max_abs_ns <= 0) return 0;
  const uint64_t span = 2 * static_cast<uint64_t>(max_abs_ns) + 1;
  const uint64_t h = Mix(seed * 0x100000001b3ull + static_cast<uint64_t>(rank));
  return static_cast<int64_t>(h % span) - max_abs_ns;
}

void ShiftTimestamps(EventColumns* e, int64_t d) {
  if (d == 0) return;
  ShiftSpans(&e->kernels, d);
  ShiftSpans(&e->memcpys, d);
  ShiftSpans(&e->memsets, d);
  ShiftSpans(&e->syncs, d);
  ShiftPoints(&e->memory, d);
  ShiftSpans(&e->apis, d);
  ShiftSpans(&e->nvtx_ranges, d);
  ShiftPoints(&e->nvtx_marks, d);
  ShiftSpans(&e->overheads, d);
  ShiftSpans(&e->graph_launches, d);
  ShiftPoints(&e->memory_pools, d);
  ShiftSpans(&e->op_works, d);
  ShiftSpans(&e->counter_samples, d);
  // External correlations and collective args carry no time.
}

}  // namespace gpuspy::synthetic
