// "Did the fix pay what was predicted?": the findings of run A that run B no longer has (or has
// much smaller), each with the gain A's what-if replay predicted for fixing it and the step time
// B measurably saved, and what B is now bound by. The measured change is the whole difference of
// the median step times: the diff compares runs, so whatever else changed between them is in it
// too, and one measured change stands against every finding fixed at once.
#pragma once

#include <cstdint>

#include "gpuspy/v1/diff.pb.h"

namespace gpuspy::analysis {

// A finding is held against B only when it is a trait of A: present in at least this share of
// A's compared steps (a finding of the odd step says little about the run's median step).
inline constexpr double kMinShareInA = 0.5;
// B fixed the finding when its loss per step (share of steps with it x median lost there) is at
// most this share of A's, and B has it in fewer than kMinShareInA of its steps or loses at most
// this share of A's median where it does: "gone, or most of it".
inline constexpr double kMaxRemainingShare = 0.5;
// Predicted gains smaller than this are not compared: a realised fraction of a few tens of
// microseconds against a step-time change of milliseconds says nothing about the prediction.
inline constexpr int64_t kMinPredictedGainNs = 100'000;
// The predicted gain counts as replayed when at least this share of A's steps with the finding
// had it from the replay (Finding.what_if), not from the idle time attributed to it.
inline constexpr double kMinReplayedShare = 0.5;

// Fills d->realised and d->realised_together. `d` already holds both sides' step-time stats
// (DiffRuns): the realised gain is d->a().median_ns() - d->b().median_ns().
void AddRealisedGains(const v1::RunProfile& a, const v1::RunProfile& b, v1::RunDiff* d);

}  // namespace gpuspy::analysis
