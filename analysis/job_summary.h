// A job's steady-state picture from its step reports.
#pragma once

#include <string>
#include <vector>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

// Aggregates steady-state steps (all steps that are not time windows when none is steady; every
// window, per window, when the job has nothing else: step_source.h). `process_count` and
// `event_count` describe the job as stored.
v1::JobSummary SummarizeJob(const std::string& job_id, const std::vector<v1::StepReport>& steps,
                            uint64_t process_count, uint64_t event_count);

}  // namespace gpuspy::analysis
