// The what-if shapes (synthetic_workload.h, WhatIfShapeScenarios): workloads whose fix removes
// host work as well as the GPU idle time after it, each with a near miss where the host work
// stays. They check the replay's predicted gains against fixed twins (what_if_twins_test.cc).
//
// Every shape runs the same ~20 ms GPU-bound model (shape_bodies.cc) after ~1.8 ms of input work
// on the main thread, so a fix that lets the host run ahead also hides that input work behind the
// previous step's GPU work: a loop with a sync per step that loses its sync is no longer
// self-contained, which a replay of the step alone cannot show.
#pragma once

#include <cstdint>
#include <vector>

#include "tools/replay/synthetic_workload.h"
#include "tools/replay/timeline.h"

namespace gpuspy::synthetic {

bool IsWhatIfShape(Scenario s);

// What a shape keeps from one step to the next: the blocks cudaMalloc'ed since the last
// empty_cache().
struct ShapeState {
  std::vector<uint64_t> blocks;
};

// The shape's forward, backward and (kClipPerParam*) gradient clipping.
void ShapeBody(Scenario s, bool fixed, double slow, Timeline& t, ShapeState& state);
// After the optimizer: empty_cache() (kEmptyCache*), loss.item() and the metrics (kItemMetrics*).
void ShapeStepEnd(Scenario s, bool fixed, Timeline& t, ShapeState& state);
// Whether the shape's loop reads loss.item() at every step's end, as the other scenarios do.
bool ShapeReadsLossEveryStep(Scenario s);

}  // namespace gpuspy::synthetic
