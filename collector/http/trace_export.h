// GET /api/jobs/{job}/trace: a job's stored data (or a range of its steps) as one Chrome/Perfetto
// trace JSON document, assembled from Query answers by exporters/chrome_trace.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "collector/http/query_params.h"
#include "collector/query/query_engine.h"

namespace gpuspy::collector {

// NotFound for an unknown job or process, and for a step range that selects no step.
absl::StatusOr<std::string> ExportTraceJson(QueryEngine* engine, const std::string& job,
                                            const TraceQuery& query);

}  // namespace gpuspy::collector
