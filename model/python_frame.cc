#include "model/python_frame.h"

#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gpuspy {

std::string UserCallSite(std::string_view frame) {
  static const char* const kNotUserCode[] = {
      "torch/", "site-packages/", "dist-packages/", "<built-in", "<frozen", "/lib/python3",
      "threading.py", "contextlib.py", "<string>"};
  const size_t open = frame.find('(');
  const size_t close = frame.find("): ");
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return "";
  const std::string_view file = frame.substr(0, open);
  const std::string_view digits = frame.substr(open + 1, close - open - 1);
  int64_t line = 0;
  if (file.empty() || !absl::SimpleAtoi(absl::string_view(digits.data(), digits.size()), &line) ||
      line <= 0) {
    return "";
  }
  for (const char* lib : kNotUserCode) {
    if (absl::StrContains(absl::string_view(file.data(), file.size()), lib)) return "";
  }
  const std::string_view function = frame.substr(close + 3);
  return absl::StrCat(absl::string_view(file.data(), file.size()), ":", line, " ",
                      absl::string_view(function.data(), function.size()));
}

}  // namespace gpuspy
