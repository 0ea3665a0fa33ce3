// `--rank R` wherever `--process P` is taken (report, steps, events, export): R becomes the
// process that ran as rank R in the job (rank_select.h), asked of gpuspyd once.
#pragma once

#include <cstdint>
#include <string>

#include "viewer/cli/commands.h"

namespace gpuspy::cli {

// Leaves *process alone when rank < 0. False, with the reason printed ("job 'x' has no rank 7
// (its ranks: 0-3)"), when gpuspyd cannot be asked or the job has no such rank.
bool ResolveRank(const GlobalOptions& g, const std::string& job, int32_t rank, uint64_t* process);

}  // namespace gpuspy::cli
