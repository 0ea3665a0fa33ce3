// What a fix saves a job whose ranks meet in collectives every step, rather than what it saves one
// rank's replay (docs/detectors.md, "What-if replay", "Across ranks").
//
// A fix in the code runs on every rank. A rank that waited in collectives for a peer gains nothing
// from its own speed-up until it stops waiting, and the job's step runs at the pace of its slowest
// rank. So each rank is seen as its own work (its step less its exposed waits in collectives), a
// fix shortens that by what it saves the rank (its own replay; nothing on a rank where the cause
// does not show), and the job saves what its slowest rank's own work loses:
//     gain(fix) = max over ranks (own) − max over ranks (own − gain of the fix on that rank)
// A cause on every rank (an .item() in the shared training loop) saves the job what it saves the
// slowest rank; a cause on one fast rank saves nothing; a cause on the slowest rank saves until the
// next slowest rank sets the pace.
#pragma once

#include <cstdint>
#include <vector>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

// Evidence key of a finding's gain on its own rank, kept beside the job's gain (its lost_ns).
inline constexpr char kThisRankAloneKey[] = "this_rank_alone";

// `reports`: one job step, one report per captured rank, after the cross-rank split (their
// CommSummary filled) and before the communication detectors. Sets each finding's lost_ns,
// severity and what-if to the job's gain for its detector. `uncaptured_peer`: a rank that was not
// captured was the last to arrive somewhere in the step; it sets the pace at the slowest captured
// rank's step, and nothing of its own is known to shorten. Idempotent (the own gain is read back
// from kThisRankAloneKey when present).
void SetJobGains(const std::vector<v1::StepReport*>& reports, bool uncaptured_peer);

}  // namespace gpuspy::analysis
