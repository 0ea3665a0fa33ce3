// What a host thread is called on the timeline: "main thread", "dataloader worker 2",
// "pin-memory thread", from the process's pid and the thread's name as the trace gives it (a
// Kineto `thread_name` event such as "thread 4037 (python3.8)" or "thread 23695 (pt_pin_memory)").
// One rule, here, so that every front end shows the same names (the viewer renders the
// timeline's lane labels as they come).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace gpuspy::analysis {

// The host threads of one process, as the timeline names them.
struct HostThreads {
  uint32_t pid = 0;  // 0: unknown (then no thread is called the main thread)
  absl::flat_hash_map<uint32_t, std::string> names;  // OS thread id -> name in the trace
};

// The main thread is the one whose id is the pid (Linux: the thread that started the process).
// Names containing "pt_data_worker" / "dataloader worker" / "dataloader_worker" -> "dataloader
// worker N" (N: the name's trailing number, if any); "pin_memory" / "pin memory" -> "pin-memory
// thread". Any other name is kept as the trace gives it; a thread without one is "thread <tid>".
std::string ThreadDisplayName(uint32_t tid, uint32_t pid, std::string_view trace_name);

}  // namespace gpuspy::analysis
