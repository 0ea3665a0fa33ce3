// A job's analysis as one self-contained static HTML page (no server, no script, no network), a
// page to send a colleague: the job summary and its findings, where each rank's step goes (the
// communication split in the palette's comm browns), the two ranks compared, GPU time by kernel
// class, the top kernels, the step table with each step's breakdown bar, a per-step timeline,
// device memory when known, and every step's findings open with evidence, gain and fix. Colours
// come from viewer/palette/ (the web viewer's); numbers only from the analysis' protos.
// Written by `gpuspy analyze --html`.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "gpuspy/v1/diff.pb.h"
#include "gpuspy/v1/report.pb.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::exporters {

// `labels`: process id -> what the page calls it (its rank). `rank_diff` (optional): the job's
// two ranks compared (JobSummary.compare_ranks, `gpuspy diff`), shown as its own section.
std::string ReportHtml(const v1::JobSummary& summary, const v1::GetStepReportResponse& reports,
                       const std::map<uint64_t, std::string>& labels,
                       const v1::RunDiff* rank_diff = nullptr);

absl::Status WriteReportHtml(const std::string& path, const v1::JobSummary& summary,
                             const v1::GetStepReportResponse& reports,
                             const std::map<uint64_t, std::string>& labels,
                             const v1::RunDiff* rank_diff = nullptr);

}  // namespace gpuspy::exporters
