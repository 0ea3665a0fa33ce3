// `gpuspy import`: PyTorch profiler traces into the collector, one process per file (rank).
#pragma once

#include <string>
#include <vector>

#include "viewer/cli/commands.h"

namespace gpuspy::cli {

int Import(const GlobalOptions& g, const std::string& job, const std::vector<std::string>& files);

}  // namespace gpuspy::cli
