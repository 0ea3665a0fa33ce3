// Comparing a trace's text with a literal, inline. `text == "literal"`, and even __builtin_memcmp
// with the literal's length, compiled to memcmp calls in the walk's and the mapping's large
// functions (GCC 12 expands only some sizes in place): those calls were ~4% of a trace read. Here
// the text is compared as whole words (2, 4 or 8 bytes, the last one overlapping the one before
// when the length is not a multiple) with the literal's, which fold to constants. Partial words
// are avoided on purpose: assembling one on the stack and loading it back stalled store
// forwarding, and the walk ran at half speed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace gpuspy::importers {
namespace literal_match_internal {

template <typename Word>
[[gnu::always_inline]] inline bool SameWord(const char* a, const char* b) {
  Word x, y;
  std::memcpy(&x, a, sizeof(Word));
  std::memcpy(&y, b, sizeof(Word));
  return x == y;
}

}  // namespace literal_match_internal

template <size_t N>
[[gnu::always_inline]] inline bool Matches(std::string_view text, const char (&literal)[N]) {
  using literal_match_internal::SameWord;
  constexpr size_t kLength = N - 1;
  if (text.size() != kLength) return false;
  const char* t = text.data();
  if constexpr (kLength == 0) {
    return true;
  } else if constexpr (kLength == 1) {
    return t[0] == literal[0];
  } else if constexpr (kLength < 4) {
    return SameWord<uint16_t>(t, literal) && SameWord<uint16_t>(t + kLength - 2, literal + kLength - 2);
  } else if constexpr (kLength < 8) {
    return SameWord<uint32_t>(t, literal) && SameWord<uint32_t>(t + kLength - 4, literal + kLength - 4);
  } else {
    for (size_t i = 0; i + 8 <= kLength; i += 8) {
      if (!SameWord<uint64_t>(t + i, literal + i)) return false;
    }
    return kLength % 8 == 0 || SameWord<uint64_t>(t + kLength - 8, literal + kLength - 8);
  }
}

}  // namespace gpuspy::importers
