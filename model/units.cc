#include "model/units.h"

#include <cstdio>

namespace gpuspy {

std::string FormatBytes(uint64_t b) {
  char buf[32];
  if (b >= (1ull << 30)) {
    std::snprintf(buf, sizeof(buf), "%.1f GiB", b / 1073741824.0);
  } else if (b >= (1ull << 20)) {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", b / 1048576.0);
  } else if (b >= (1ull << 10)) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", b / 1024.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(b));
  }
  return buf;
}

std::string FormatMs(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f ms", ns / 1e6);
  return buf;
}

std::string FormatUs(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f us", ns / 1e3);
  return buf;
}

std::string FormatDuration(int64_t ns) {
  char buf[32];
  if (ns < 1000) {
    std::snprintf(buf, sizeof(buf), "%lld ns", static_cast<long long>(ns));
  } else if (ns < 1'000'000) {
    std::snprintf(buf, sizeof(buf), "%.1f us", ns / 1e3);
  } else if (ns < 1'000'000'000) {
    std::snprintf(buf, sizeof(buf), "%.2f ms", ns / 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f s", ns / 1e9);
  }
  return buf;
}

namespace {

// Three significant figures with a decimal prefix: "612 T", "1.23 T", "85.0 G".
std::string WithPrefix(double v, const char* unit) {
  static constexpr struct {
    double scale;
    const char* prefix;
  } kPrefixes[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}};
  for (const auto& p : kPrefixes) {
    if (v >= p.scale || p.scale == 1) {
      const double x = v / p.scale;
      char buf[48];
      std::snprintf(buf, sizeof(buf), x >= 100 ? "%.0f %s%s" : x >= 10 ? "%.1f %s%s" : "%.2f %s%s", x,
                    p.prefix, unit);
      return buf;
    }
  }
  return "";
}

}  // namespace

std::string FormatFlopRate(double flops_per_s) { return WithPrefix(flops_per_s, "FLOP/s"); }

std::string FormatByteRate(double bytes_per_s) { return WithPrefix(bytes_per_s, "B/s"); }

}  // namespace gpuspy
