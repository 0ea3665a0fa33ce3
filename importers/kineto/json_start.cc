#include "importers/kineto/json_start.h"

#include "absl/strings/str_cat.h"

namespace gpuspy::importers {

absl::Status CheckStartsLikeJson(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && IsJsonSpace(text[i])) ++i;
  if (i == text.size()) {
    return absl::InvalidArgumentError("the file is empty: not a PyTorch profiler (Kineto) trace");
  }
  const char c = text[i];
  if (c != '{' && c != '[') {
    return absl::InvalidArgumentError(absl::StrCat(
        "not JSON (starts with byte 0x", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2),
        "; a trace starts with '{'): not a PyTorch profiler (Kineto) trace"));
  }
  return absl::OkStatus();
}

}  // namespace gpuspy::importers
