// `gpuspy import`: PyTorch profiler traces into the collector, one process per file (rank).
//
// Safe to repeat and all or nothing:
// - Idempotent: each file's SHA-256 (file_sha256.h) is stored with its process; a file the
//   collector holds already (FindImports) is not sent again ("already imported as job J"), unless
//   `replace`, which deletes that earlier process first, so the counts equal one import.
// - Atomic per import: every file is read and parsed before anything is sent; if one fails,
//   nothing is stored and the exit code is 1 (`keep_going`: the others are imported, the skipped
//   ones named on stderr, and the exit code is still 1). A send that fails midway (the collector
//   went away) deletes what this import had stored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "importers/kineto/trace_bytes.h"
#include "viewer/cli/commands.h"

namespace gpuspy::cli {

struct ImportOptions {
  std::string job;
  std::vector<std::string> files;
  bool replace = false;
  bool keep_going = false;
  // Stored as the job's own step pattern once the files are in (SetStepPattern): its NVTX
  // steps are the ranges matching it. "": the job keeps whatever it has (else gpuspyd's).
  std::string step_pattern;
  uint64_t max_trace_bytes = importers::kDefaultMaxJsonBytes;  // a file's JSON text, inflated
};

int Import(const GlobalOptions& g, const ImportOptions& options);

}  // namespace gpuspy::cli
