// `gpuspy spill`: the spill files in this user's spill directory, and delivering the ones that
// ended processes left behind (a SLURM epilog runs it before it removes a job's spill directory).
#pragma once

#include <string>

#include "viewer/cli/commands.h"

namespace gpuspy::cli {

struct SpillOptions {
  std::string dir;       // empty: $GPUSPY_SPILL_DIR, else the default
  bool deliver = false;  // send what ended processes left behind to the collector
};

// Exit 0 when nothing is left behind undelivered (files of running processes do not count),
// 1 otherwise.
int Spill(const GlobalOptions& g, const SpillOptions& s);

}  // namespace gpuspy::cli
