// "Why is B slower than A?": two RunProfiles (run_profile.h) compared. The step-time change is
// split into the parts of the wall time (compute, exposed communication, GPU idle by cause),
// each part into the changes that explain it (kernels by name, GEMMs that left tensor cores,
// blocking call sites, launches, collectives), ranked by ms per step. Means add up, medians do
// not: the parts and the contributions, "other" included, add up exactly to the change of the
// mean step time; the headline is the median's change with its noise.
#pragma once

#include "absl/status/status.h"
#include "gpuspy/v1/diff.pb.h"

namespace gpuspy::analysis {

// A change smaller than this, or than kMinContributionShare of the mean change, is left in
// "other": it would be noise in the explanation.
inline constexpr int64_t kMinContributionNs = 20'000;
inline constexpr double kMinContributionShare = 0.02;
// At most this many contributions before "other".
inline constexpr int kMaxContributions = 8;
// A kernel's call count that changes by more than this share makes its change "more calls"
// rather than "slower" (when the calls explain most of it).
inline constexpr double kCallsChangeShare = 0.1;
// The median's change is within noise when at most this many combined standard errors.
inline constexpr double kNoiseFactor = 2.0;
// Fewer compared steps than this on a side: no noise estimate.
inline constexpr uint32_t kMinStepsForNoise = 3;

v1::RunDiff DiffRuns(const v1::RunProfile& a, const v1::RunProfile& b);

// Whether two runs' figures can be compared per step: not when one side has real steps and the
// other only time windows (no step found), whose "per step" is per window: "faster by 777.6 ms
// per step, beyond the noise" between the two says nothing. FailedPrecondition, naming both
// sides and what to do, when they differ; callers refuse the diff with it.
absl::Status CheckComparable(const v1::RunProfile& a, const v1::RunProfile& b);

}  // namespace gpuspy::analysis
