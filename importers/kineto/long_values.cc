#include "importers/kineto/long_values.h"

#include <cstring>

namespace gpuspy::importers {
namespace {

// Whether the '"' at `q` closes or opens a string (an even run of backslashes before it).
bool Unescaped(std::string_view json, size_t q) {
  size_t backslashes = 0;
  while (q > backslashes && json[q - backslashes - 1] == '\\') ++backslashes;
  return backslashes % 2 == 0;
}

}  // namespace

std::optional<size_t> FindOverlongValue(std::string_view json, size_t block_bytes) {
  if (block_bytes == 0) return std::nullopt;
  for (size_t at = 0; at + block_bytes <= json.size(); at += block_bytes) {
    const size_t end = at + block_bytes;
    bool quoted = false;
    for (size_t from = at; from < end && !quoted;) {
      const void* q = std::memchr(json.data() + from, '"', end - from);
      if (q == nullptr) break;
      const size_t i = static_cast<size_t>(static_cast<const char*>(q) - json.data());
      quoted = Unescaped(json, i);
      from = i + 1;
    }
    if (!quoted) return at;
  }
  return std::nullopt;
}

}  // namespace gpuspy::importers
