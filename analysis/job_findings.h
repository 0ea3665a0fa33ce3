// A job's findings, one per detector over the steps its figures come from (JobSummary.findings):
// in how many steps it fired, what it costs per step over all of them, its worst step. The
// web's job page, `gpuspy summary` and the HTML report list these; none aggregates findings.
#pragma once

#include <vector>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

// `basis`: the steps (the steady ones, or every step when none is steady: `steady_only` says
// which). Most lost time per step first; ties: the worse severity, then the detector's name.
std::vector<v1::JobFinding> AggregateFindings(const std::vector<const v1::StepReport*>& basis,
                                              bool steady_only);

}  // namespace gpuspy::analysis
