#include "importers/kineto/long_values.h"

#include <cstring>

namespace gpuspy::importers {
namespace {

// The run of backslashes that ends `text`, continuing `before` when all of `text` is one.
size_t TrailingBackslashes(std::string_view text, size_t before) {
  size_t n = 0;
  while (n < text.size() && text[text.size() - n - 1] == '\\') ++n;
  return n == text.size() ? before + n : n;
}

// Whether `part` holds a '"' with an even run of backslashes before it; the run may begin in the
// text before `part`, where `before` backslashes end it.
bool HoldsUnescapedQuote(std::string_view part, size_t before) {
  for (size_t from = 0; from < part.size();) {
    const void* q = std::memchr(part.data() + from, '"', part.size() - from);
    if (q == nullptr) return false;
    const size_t i = static_cast<size_t>(static_cast<const char*>(q) - part.data());
    if (TrailingBackslashes(part.substr(0, i), before) % 2 == 0) return true;
    from = i + 1;
  }
  return false;
}

}  // namespace

bool OverlongValueScan::Feed(std::string_view more) {
  if (found_ || block_bytes_ == 0) return !found_;
  while (!more.empty()) {
    if (block_end_ == 0) block_end_ = block_bytes_;
    // The part of `more` in the current block: looked at only until the block has a quote.
    const size_t n = std::min(more.size(), block_end_ - fed_);
    const std::string_view part = more.substr(0, n);
    quoted_ = quoted_ || HoldsUnescapedQuote(part, backslashes_);
    backslashes_ = TrailingBackslashes(part, backslashes_);
    fed_ += n;
    more.remove_prefix(n);
    if (fed_ == block_end_) {
      if (!quoted_) {
        found_ = block_end_ - block_bytes_;
        return false;
      }
      block_end_ += block_bytes_;
      quoted_ = false;
    }
  }
  return true;
}

std::optional<size_t> FindOverlongValue(std::string_view json, size_t block_bytes) {
  OverlongValueScan scan(block_bytes);
  scan.Feed(json);
  return scan.found();
}

}  // namespace gpuspy::importers
