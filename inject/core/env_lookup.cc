#include "inject/core/env_lookup.h"

#include <cstdlib>

namespace gpuspy::inject {

std::string RealEnv(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

}  // namespace gpuspy::inject
