// memory_growth: device memory that keeps growing from step to step in the steady state, up to
// the last step seen: a leak (live tensors kept across steps) or fragmentation (the caching
// allocator reserving ever more for the same live tensors). A step-series detector: it needs the
// absolute levels of several steps (memory_usage.h). Thresholds: docs/detectors.md.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

// A step grows (or shrinks) when its level moves by at least this much; smaller moves are
// noise (the caching allocator's small-block segments are 2 MiB).
inline constexpr int64_t kMinStepGrowthBytes = 1ll << 20;
// In the growing stretch at least this many steady steps grow...
inline constexpr size_t kMinGrowingSteps = 4;
// ...they are at least this share of its steps, none shrinks...
inline constexpr double kGrowthStepShare = 0.75;
// ...and together they add at least this much.
inline constexpr int64_t kMinGrowthBytes = 64ll << 20;

// The growing stretch of one level series.
struct GrowthRun {
  size_t first = 0;          // index of the stretch's first step
  size_t onset = 0;          // index of its first growing step: where the growth started
  size_t steps = 0;          // first .. the last step
  size_t growing_steps = 0;
  int64_t growth_bytes = 0;  // level at the end of the last step - before the stretch
};

// `levels[i]` is steady step i's level at its end; `start_level` the level before the first one.
// The longest stretch ending at the last step that meets the rule above; nullopt when none does.
std::optional<GrowthRun> FindGrowthRun(int64_t start_level, const std::vector<int64_t>& levels);

// Over one process's steps in order: finds the growth among the steady steps that have memory
// (StepReport.memory) and adds a memory_growth finding to every step from its onset to the last.
// Live tensors (allocated, when the source knows it) growing make it a leak; reserved memory
// growing alone, fragmentation or a growing cache.
void DetectMemoryGrowth(const std::vector<v1::StepReport*>& steps);

}  // namespace gpuspy::analysis
