// CLI-specific formatting (tables want bare numbers); sizes and durations come from model/units.
#pragma once

#include <cstdint>
#include <string>

#include "model/units.h"

namespace gpuspy::cli {

std::string Ms(int64_t ns);             // "12.34"
std::string Percent(int64_t part, int64_t whole);  // "37.5%"
std::string Ago(int64_t unix_ns, int64_t now_unix_ns);  // "3s ago", "5m ago", "2h ago"

}  // namespace gpuspy::cli
