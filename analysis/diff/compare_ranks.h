// Which two ranks of a multi-rank job explain the most when compared: B, the rank the others
// waited for in the most steady steps (ties, and a job without a straggler: the most own work,
// step time minus waiting in collectives, which a synchronous collective does not equalise); A,
// the rank with the least own work among the others. One rule for `gpuspy analyze --html`'s
// rank comparison and the viewer's compare page (JobSummary.compare_ranks).
#pragma once

#include <optional>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

// Unset with fewer than two ranks in summary.ranks().
std::optional<v1::RankPair> RanksToCompare(const v1::JobSummary& summary);

}  // namespace gpuspy::analysis
