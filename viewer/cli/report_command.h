// `gpuspy report`: per-step reports of a job, of one rank (--rank), or the ranks x steps matrix of
// verdicts of a multi-rank job (--ranks).
#pragma once

#include <cstdint>
#include <string>

#include "viewer/cli/commands.h"

namespace gpuspy::cli {

struct ReportOptions {
  std::string job;
  int64_t step = -1;
  uint32_t last = 0;
  bool all = false;
  uint64_t process = 0;
  int32_t rank = -1;   // >= 0: only the process that ran as this rank
  bool ranks = false;  // the ranks x steps matrix instead of the reports
};

int Report(const GlobalOptions& g, const ReportOptions& r);

}  // namespace gpuspy::cli
