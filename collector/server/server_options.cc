#include "collector/server/server_options.h"

#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace gpuspy::collector {

std::string DefaultUnixSocketPath() {
  return absl::StrCat("/tmp/gpuspy-", getuid(), "/gpuspyd.sock");
}

std::string DefaultDataDir() {
  if (const char* d = std::getenv("GPUSPY_DATA_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x != nullptr && *x != '\0') {
    return absl::StrCat(x, "/gpuspy");
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return absl::StrCat(h, "/.local/share/gpuspy");
  }
  return "/tmp/gpuspy-data";
}

}  // namespace gpuspy::collector
