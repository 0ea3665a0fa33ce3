// The what-if replay in words, for the text screens (CLI, HTML report): one phrasing, so they
// read the same. The web viewer renders the same fields (findings.js).
#pragma once

#include <string>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis::replay {

// "would take 12.30 ms without it (-23%), with the blocking calls returning at once"
std::string WhatIfLine(const v1::WhatIf& what_if);
// "all fixes together: 31.20 ms (-41%)", or "gains unavailable: <reason>; lost times are the
// idle time attributed to each cause"; "" when the step was not replayed.
std::string ReplayLine(const v1::StepReplay& replay);

}  // namespace gpuspy::analysis::replay
