#include "collector/live/forget_gone_processes.h"

#include <vector>

#include "absl/container/flat_hash_set.h"

namespace gpuspy::collector {

size_t ForgetMemoryTotalsOfGoneProcesses(Store& store, const ConnectionRegistry& connections,
                                         MemoryTotals& totals) {
  absl::StatusOr<std::vector<ProcessRecord>> listed = store.ListProcesses("");
  if (!listed.ok()) return 0;
  absl::flat_hash_set<uint64_t> holding_events;
  for (const ProcessRecord& p : *listed) {
    if (p.event_count > 0) holding_events.insert(p.process_id);
  }
  const size_t before = totals.process_count();
  totals.ForgetUnless([&](uint64_t id) { return holding_events.contains(id) || connections.IsConnected(id); });
  const size_t after = totals.process_count();
  return before > after ? before - after : 0;
}

}  // namespace gpuspy::collector
