// Turns a step's findings into predictions: each finding's lost_ns becomes what the step would
// save with its fix (the step replayed with the fix's edit, edits/edits.h), and the step gains
// "all fixes together" (one replay with every edit, which is not the sum of the gains).
#pragma once

#include <vector>

#include "analysis/detectors/step_context.h"
#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis::replay {

// The unedited replay must reproduce the recorded wall time within this share, or the step's
// gains are unavailable (StepReplay.unavailable_reason) and findings keep the idle attribution.
inline constexpr double kMaxReplayError = 0.02;

// Sets each finding's lost_ns, severity and what_if from the replay, and `replay`.
void ApplyWhatIfs(const StepContext& ctx, std::vector<v1::Finding>* findings, v1::StepReplay* replay);

}  // namespace gpuspy::analysis::replay
