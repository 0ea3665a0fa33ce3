// `gpuspy diff A B`: why one run (or rank, or step range) is slower than another. Each side is
// trace files analysed here (offline_job.h) or a job in gpuspyd (Query.GetRunProfile); both are
// profiled by the same function (analysis/diff/run_profile.h) and compared by DiffRuns.
#pragma once

#include <string>

#include "viewer/cli/commands.h"

namespace gpuspy::cli {

struct DiffOptions {
  std::string a;       // run_spec.h
  std::string b;
  unsigned threads = 0;  // trace files read at once (0: one per core)
};

int Diff(const GlobalOptions& g, const DiffOptions& o);

}  // namespace gpuspy::cli
