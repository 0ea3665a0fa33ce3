#include "viewer/cli/process_key.h"

#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"

namespace gpuspy::cli {

bool SameProcessKey(const std::string& stored, const std::string& chosen) {
  if (stored == chosen) return true;
  const size_t slash = stored.find('/');
  if (slash == std::string::npos || stored.compare(slash + 1, std::string::npos, chosen) != 0) {
    return false;
  }
  uint32_t uid = 0;
  return absl::StartsWith(stored, "uid") &&
         absl::SimpleAtoi(absl::string_view(stored).substr(3, slash - 3), &uid);
}

}  // namespace gpuspy::cli
