// The gpuspyd daemon, all of it but main(): in gpuspy_collector_server, so that it is compiled
// with the libraries' precompiled headers and in a unity batch with the server it starts (gRPC,
// spdlog parsed once) rather than parsing everything alone in the executable's one file
// (bench/results/first-run-2026-11-28.md).
#pragma once

namespace gpuspy::collector {

// Parses the command line, runs the collector until SIGTERM or SIGINT; the process's exit
// status. `version_number`: what `gpuspyd --version` prints after "gpuspyd ".
int RunGpuspyd(int argc, char** argv, const char* version_number);

}  // namespace gpuspy::collector
