// Human formatting of durations, sizes and times for the CLI.
#pragma once

#include <cstdint>
#include <string>

namespace gpuspy::cli {

std::string Ms(int64_t ns);             // "12.34"
std::string Duration(int64_t ns);       // "850 ns", "12.3 us", "4.56 ms", "1.20 s"
std::string Bytes(uint64_t bytes);      // "512.0 MiB"
std::string Percent(int64_t part, int64_t whole);  // "37.5%"
std::string Ago(int64_t unix_ns, int64_t now_unix_ns);  // "3s ago", "5m ago", "2h ago"

}  // namespace gpuspy::cli
