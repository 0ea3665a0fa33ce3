#include "viewer/cli/format.h"

#include <cstdio>

namespace gpuspy::cli {

std::string Ms(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", ns / 1e6);
  return buf;
}

std::string Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.1f%%", 100.0 * part / whole);
  return buf;
}

std::string Ago(int64_t unix_ns, int64_t now) {
  if (unix_ns <= 0) return "-";
  const int64_t s = (now - unix_ns) / 1'000'000'000;
  if (s < 0) return "now";
  if (s < 120) return std::to_string(s) + "s ago";
  if (s < 7200) return std::to_string(s / 60) + "m ago";
  if (s < 172800) return std::to_string(s / 3600) + "h ago";
  return std::to_string(s / 86400) + "d ago";
}

}  // namespace gpuspy::cli
