// GET /api/jobs/{job}/timeline?process=P&step=N: one step's events for the viewer's timeline,
// with GPU idle intervals attributed to their cause (format in timeline_json.h).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "collector/query/query_engine.h"

namespace gpuspy::collector {

// NotFound for an unknown job, process or step.
absl::StatusOr<std::string> StepTimeline(QueryEngine* engine, const std::string& job_id,
                                         uint64_t process_id, int64_t step);

}  // namespace gpuspy::collector
