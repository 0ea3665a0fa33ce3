// `gpuspy export`: a job (or a range of its steps) as a Chrome/Perfetto trace file.
#pragma once

#include <string>

#include "viewer/cli/commands.h"

namespace gpuspy::cli {

struct ExportOptions {
  std::string job;
  std::string steps;  // "A-B" or "N"; empty = everything
  uint64_t process = 0;
  std::string output;
};

int Export(const GlobalOptions& g, const ExportOptions& options);

}  // namespace gpuspy::cli
