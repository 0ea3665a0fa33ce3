// Where gpuspy's own shared libraries are, for the commands that put them into other processes
// (`gpuspy run`: the LD_PRELOAD shim; `gpuspy attach --pid`: the injection stub).
#pragma once

#include <string>

namespace gpuspy::cli {

// `$env_var` when set, else `file_name` next to this binary's install or build location; an
// absolute path, or "" when not found.
std::string FindInstalledLibrary(const char* file_name, const char* env_var);

}  // namespace gpuspy::cli
