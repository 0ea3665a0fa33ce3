// PyTorch profiler [memory] events (profile_memory=True): after every tensor allocation or free
// on a device, the caching allocator's totals. Imported as allocator usage samples
// (MemoryPoolEvent, op kUsage: size = Total Reserved, utilized_bytes = Total Allocated), not as
// tensor-level MemoryEvents: those stand for cudaMalloc'd segments everywhere else (the
// alloc_churn detector counts them), and a tensor allocation is not a cudaMalloc.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "model/events.h"

namespace gpuspy::importers {

// An event's arg by key: its text, or null when the event has none.
using ArgLookup = absl::FunctionRef<const std::string_view*(std::string_view key)>;

// The sample of one [memory] event's args at `timestamp_ns`; nullopt (and `*skip_reason` set)
// for host memory (Device Type 0: CPU) and for events without both totals.
std::optional<MemoryPoolEvent> AllocatorSample(int64_t timestamp_ns,
                                               ArgLookup args,
                                               std::string* skip_reason);

}  // namespace gpuspy::importers
