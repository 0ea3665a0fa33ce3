// Two small rules of the report's wording, in one place so every screen says it the same way:
// a count agrees with its noun ("1 rank", "2 processes"), and a long name (a kernel's C++
// signature) is shortened at a token boundary with an ellipsis, never cut inside a word
// ("...float, float" or "ncclWor" read as garbled names).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuspy::analysis {

// "1 process", "2 processes", "0 processes".
std::string CountOf(uint64_t n, std::string_view singular, std::string_view plural);

// `name` itself when at most `max_chars` bytes long; else its longest prefix that ends at a token
// boundary (an identifier is never split), without trailing separators, followed by "…", in at
// most `max_chars` bytes plus the ellipsis. A single identifier longer than that is cut inside it
// (there is no boundary to use), still marked with "…".
std::string ClipName(std::string_view name, size_t max_chars);

}  // namespace gpuspy::analysis
