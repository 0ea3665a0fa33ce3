// The human view of step reports, shared by `gpuspy report` and `gpuspy attach`.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "gpuspy/v1/services.pb.h"
#include "viewer/cli/query_client.h"

namespace gpuspy::cli {

// process id -> "N" (the rank), or "pid P" when the launcher gave no rank.
std::map<uint64_t, std::string> ProcessLabels(QueryClient& q, const std::string& job);
std::string Label(const std::map<uint64_t, std::string>& labels, uint64_t process_id);

// A table of the steps (by rank, then step), `after_table` (e.g. the cross-rank lines), then each
// step's breakdown, communication split and most waited collectives, findings with evidence and
// fix hints, and top kernel.
void PrintStepReports(QueryClient& q, const std::string& job, const v1::GetStepReportResponse& resp,
                      const std::function<void()>& after_table = {});
// The same with the processes' labels at hand (`gpuspy analyze`, no collector to ask).
void PrintStepReports(const std::map<uint64_t, std::string>& labels,
                      const v1::GetStepReportResponse& resp,
                      const std::function<void()>& after_table = {});

}  // namespace gpuspy::cli
