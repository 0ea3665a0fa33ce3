// What the job-level analysis (analysis/job_analysis.h, shared with `gpuspy analyze`) needs of
// each stored process: for the whole-job and the recent-steps paths of QueryEngine alike.
#pragma once

#include <string>
#include <vector>

#include "analysis/job_analysis.h"
#include "collector/storage/store.h"

namespace gpuspy::collector {

// The job of `processes` (a query selected them by it, so they share it); "" for none.
inline std::string JobIdOf(const std::vector<ProcessRecord>& processes) {
  return processes.empty() ? "" : processes.front().identity.job_id();
}

inline std::vector<analysis::JobProcess> JobProcesses(const std::vector<ProcessRecord>& processes) {
  std::vector<analysis::JobProcess> out;
  for (const ProcessRecord& p : processes) {
    const bool gpu = p.identity.devices_size() > 0;
    out.push_back({p.process_id, p.identity.rank(), p.identity.world_size(),
                   p.identity.clock_offset_ns(), p.identity.host(), p.event_count,
                   gpu ? p.identity.devices(0).name() : "",
                   gpu ? p.identity.devices(0).global_memory_bytes() : 0});
  }
  return out;
}

}  // namespace gpuspy::collector
