// Host clocks of different machines disagree; CUPTI timestamps inherit that. Shifting a rank's
// events by its offset reproduces what the cross-rank analysis must undo.
#pragma once

#include <cstdint>

#include "model/events.h"

namespace gpuspy::synthetic {

// A deterministic offset in [-max_abs_ns, max_abs_ns] for (seed, rank); 0 when max_abs_ns <= 0.
int64_t DeterministicClockOffsetNs(uint64_t seed, int rank, int64_t max_abs_ns);

// Adds `delta_ns` to every timestamp in `events`.
void ShiftTimestamps(EventColumns* events, int64_t delta_ns);

}  // namespace gpuspy::synthetic
