// Which row of its thread's NVTX band each range is drawn in: its nesting depth among the ranges
// of the same thread. Recorded depths are not enough: a profiler's ranges (Kineto's
// "ProfilerStep#5", "zero_grad", "DDP.forward") all come with depth 0, and nested ones drawn in
// one row overprint each other. Ranges that overlap never share a row.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/events.h"

namespace gpuspy::analysis {

// Row per range, in the order of `ranges`; 0 is the outermost.
std::vector<uint32_t> NvtxRows(std::span<const NvtxRangeEvent> ranges);

}  // namespace gpuspy::analysis
