// What the job-level analysis (analysis/job_analysis.h, shared with `gpuspy analyze`) needs of
// each stored process: for the whole-job and the recent-steps paths of QueryEngine alike.
#pragma once

#include <vector>

#include "analysis/job_analysis.h"
#include "collector/storage/store.h"

namespace gpuspy::collector {

inline std::vector<analysis::JobProcess> JobProcesses(const std::vector<ProcessRecord>& processes) {
  std::vector<analysis::JobProcess> out;
  for (const ProcessRecord& p : processes) {
    out.push_back({p.process_id, p.identity.rank(), p.identity.world_size(),
                   p.identity.clock_offset_ns(), p.identity.host(), p.event_count});
  }
  return out;
}

}  // namespace gpuspy::collector
