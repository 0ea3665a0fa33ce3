// `gpuspy run`: replaces this process with the command under gpuspy (LD_PRELOAD of the shim).
#include "viewer/cli/commands.h"
#include "viewer/cli/installed_library.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace gpuspy::cli {

int Run(const GlobalOptions& g, const std::string& job, const std::vector<std::string>& command) {
  if (command.empty()) {
    std::fprintf(stderr, "gpuspy run: nothing to run (usage: gpuspy run -- CMD ARGS...)\n");
    return 2;
  }
  // The path is absolute: the command may change directory before a child's loader reads it.
  const std::string shim = FindInstalledLibrary("libgpuspy.so", "GPUSPY_LIB");
  if (shim.empty()) {
    std::fprintf(stderr,
                 "gpuspy run: cannot find libgpuspy.so next to the gpuspy binary; set GPUSPY_LIB "
                 "to its path\n");
    return 1;
  }
  // The loader only warns about a missing LD_PRELOAD library and runs the job unprofiled.
  if (std::error_code ec; !std::filesystem::is_regular_file(shim, ec)) {
    std::fprintf(stderr, "gpuspy run: %s (from GPUSPY_LIB) does not exist\n", shim.c_str());
    return 1;
  }
  std::string preload = shim;
  if (const char* existing = std::getenv("LD_PRELOAD"); existing != nullptr && *existing != '\0') {
    preload += std::string(":") + existing;
  }
  setenv("LD_PRELOAD", preload.c_str(), 1);
  setenv("GPUSPY_COLLECTOR", g.collector.c_str(), 1);
  if (!job.empty()) setenv("GPUSPY_JOB", job.c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "gpuspy run: cannot run %s: %s\n", argv[0], std::strerror(errno));
  return 127;
}

}  // namespace gpuspy::cli
