// `--csv`: the step table and the job summary as CSV, for spreadsheets and pandas. The fields are
// the proto's, with their JSON names and values (times in ns, counts as counts, the step kind as
// its enum name): the same numbers `--json` gives, nothing computed here.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>

#include "gpuspy/v1/services.pb.h"

namespace gpuspy::cli {

// One row per step report, in the order the human table has (by rank, then step).
void PrintStepCsv(const std::map<uint64_t, std::string>& labels,
                  const v1::GetStepReportResponse& resp, std::ostream& out);

// One row per job finding (the summary's FINDING table), each beginning with the job's own
// figures so a row reads on its own; a job without findings is one row of its figures alone.
void PrintSummaryCsv(const v1::JobSummary& summary, std::ostream& out);

}  // namespace gpuspy::cli
