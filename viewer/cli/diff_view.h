// The text form of a RunDiff: both sides' step times, the parts of the step that changed, the
// verdicts, and the ranked changes that add up to the difference.
#pragma once

#include <ostream>

#include "gpuspy/v1/diff.pb.h"

namespace gpuspy::cli {

void PrintDiff(const v1::RunDiff& diff, std::ostream& out);

}  // namespace gpuspy::cli
