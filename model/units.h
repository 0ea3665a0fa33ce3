// Human-readable sizes and durations, shared by the analysis (finding texts) and the CLI.
#pragma once

#include <cstdint>
#include <string>

namespace gpuspy {

std::string FormatBytes(uint64_t bytes);  // "512 B", "4.0 KiB", "512.0 MiB", "1.5 GiB"
std::string FormatMs(int64_t ns);         // "12.3 ms"
std::string FormatUs(int64_t ns);         // "8.1 us"
std::string FormatDuration(int64_t ns);   // "850 ns", "12.3 us", "4.56 ms", "1.20 s"
std::string FormatFlopRate(double flops_per_s);  // "612 TFLOP/s", "8.4 GFLOP/s"
std::string FormatByteRate(double bytes_per_s);  // "1.23 TB/s", "850 GB/s" (powers of 10)

}  // namespace gpuspy
