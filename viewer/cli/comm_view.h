// A step's communication on one rank in text (StepReport.comm, from the cross-rank analysis):
// the split of time in collectives into waiting for the last rank and moving data, and the
// collectives waited on longest.
#pragma once

#include <string>
#include <vector>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::cli {

// How many waited collectives a step's detail lists.
inline constexpr int kListedCollectives = 3;

// "comm 12.30 ms = wait 8.10 (for rank 2) + transfer 4.20; exposed 3.00 ms"
std::string CommLine(const v1::CommSummary& comm);

// The collectives with a wait, most waited first (as the analysis orders them), at most `max`:
// "allreduce #3 (group dp): waited 4.10 of 5.00 ms for rank 2; 64.0 MiB at 120.5 GB/s"
std::vector<std::string> WaitedCollectives(const v1::CommSummary& comm, int max = kListedCollectives);

}  // namespace gpuspy::cli
