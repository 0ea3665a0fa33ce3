// How the core reads its environment, injectable so that tests and fuzz targets pass their own
// variables (process_identity.h, core_config.h).
#pragma once

#include <functional>
#include <string>

namespace gpuspy::inject {

// Looks up an environment variable. Returns "" when unset (or set to "").
using EnvLookup = std::function<std::string(const char*)>;
// The process environment (std::getenv).
std::string RealEnv(const char* name);

}  // namespace gpuspy::inject
