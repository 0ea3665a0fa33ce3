// The gpuspy command line, all of it but main(): in gpuspy_cli_lib, so that it is compiled with
// the library's precompiled CLI11 and gRPC headers (and in its unity batches) rather than
// parsing them alone in the executable's one file (bench/results/first-run-2026-11-28.md).
#pragma once

namespace gpuspy::cli {

// Parses the command line and runs the command; the process's exit status. `version_number`:
// what `gpuspy --version` prints after "gpuspy ".
int RunGpuspy(int argc, char** argv, const char* version_number);

}  // namespace gpuspy::cli
