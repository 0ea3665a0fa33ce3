// How gpuspyd records a process's key, as the CLI has to match it.
#pragma once

#include <string>

namespace gpuspy::cli {

// Whether gpuspyd's key for a process (`stored`) is the key the process chose: a shared daemon
// records a uid-bound producer's key as "uid<N>/<key>" (collector/auth/grpc_access.cc).
bool SameProcessKey(const std::string& stored, const std::string& chosen);

}  // namespace gpuspy::cli
