// Comparing a trace's text with a literal, inline. `text == "literal"` compiles to a call of
// std::string_view::compare wherever GCC stops inlining (the walk's and the mapping's large
// functions): memcmp from such calls was ~4% of a trace read. With the length a constant, the
// compare is one or two integer compares.
#pragma once

#include <cstddef>
#include <string_view>

namespace gpuspy::importers {

template <size_t N>
[[gnu::always_inline]] inline bool Matches(std::string_view text, const char (&literal)[N]) {
  return text.size() == N - 1 && __builtin_memcmp(text.data(), literal, N - 1) == 0;
}

}  // namespace gpuspy::importers
