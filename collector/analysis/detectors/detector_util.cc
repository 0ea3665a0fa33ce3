#include <cstdio>

#include "collector/analysis/detectors/step_context.h"

namespace gpuspy::analysis {

void AddEvidence(v1::Finding* f, const std::string& key, const std::string& value) {
  auto* e = f->add_evidence();
  e->set_key(key);
  e->set_value(value);
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

std::string FormatPercent(double fraction) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.0f%%", fraction * 100);
  return buf;
}

std::string SeverityFor(double share) {
  if (share >= 0.25) return "critical";
  if (share >= 0.05) return "warning";
  return "info";
}

}  // namespace gpuspy::analysis
