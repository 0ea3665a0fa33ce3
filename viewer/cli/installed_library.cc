#include "viewer/cli/installed_library.h"

#include <cstdlib>
#include <filesystem>

namespace gpuspy::cli {

std::string FindInstalledLibrary(const char* file_name, const char* env_var) {
  std::error_code ec;
  if (const char* env = std::getenv(env_var); env != nullptr && *env != '\0') {
    return std::filesystem::weakly_canonical(env, ec).string();
  }
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const std::filesystem::path dir = exe.parent_path();
  for (const auto& candidate : {dir / "../lib" / file_name, dir / "../../lib" / file_name,
                                dir / file_name, dir / "../lib/gpuspy" / file_name}) {
    if (std::filesystem::exists(candidate, ec)) {
      return std::filesystem::weakly_canonical(candidate, ec).string();
    }
  }
  return "";
}

}  // namespace gpuspy::cli
