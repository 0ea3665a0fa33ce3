// Device memory per step: how much is live when a step starts, at its peak and when it ends.
// Two sources (docs/detectors.md, "Device memory"): cudaMalloc'd segments from CUPTI MEMORY2
// records (what PyTorch's caching allocator reserves), or the caching allocator's own totals from
// PyTorch profiler [memory] events (reserved and allocated). A window's events only say what
// changed in it, so levels are absolute only once every earlier stretch of the process (start-up,
// gaps between steps) has been measured too and carried across the steps in order.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gpuspy/v1/report.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

// How many call sites a step's memory lists.
inline constexpr int kMaxAllocationSites = 5;

// What one stretch of a process's events says about device memory on its own.
struct WindowMemory {
  // MEMORY2 device allocations/frees (cudaMalloc'd segments) in the stretch.
  uint64_t segment_ops = 0;
  int64_t segment_net_bytes = 0;        // allocated - freed
  int64_t segment_peak_rise_bytes = 0;  // highest running (allocated - freed); >= 0
  // Caching-allocator usage samples (PoolOpKind::kUsage) in the stretch, summed over devices.
  uint64_t samples = 0;
  int64_t reserved_first_bytes = 0, reserved_last_bytes = 0, reserved_peak_bytes = 0;
  int64_t allocated_first_bytes = 0, allocated_last_bytes = 0, allocated_peak_bytes = 0;
  // Segments allocated in the stretch and still live at its end, by call site (known sites only).
  std::vector<v1::AllocationSite> sites;
};

// Memory events with timestamps in [from_ns, to_ns). Events may be in any order.
WindowMemory MeasureWindowMemory(const EventColumns& events, const StringTable& strings,
                                 int64_t from_ns, int64_t to_ns);

// `later` (the stretch right after `into`'s) appended to `into`: one stretch read in pieces.
void AppendStretch(const WindowMemory& later, WindowMemory* into);

// One step of a process as the level computation sees it: what happened since the previous
// step ended (for the first step, since the process started) and within the step.
struct StepMemoryInput {
  WindowMemory before;
  WindowMemory step;
};

// The steps' absolute levels, in step order (steps in order, one process). Unset for a step when
// neither it nor any earlier stretch had memory events (memory capture off, no profile_memory).
std::vector<std::optional<v1::StepMemory>> MemoryLevels(const std::vector<StepMemoryInput>& steps);

}  // namespace gpuspy::analysis
