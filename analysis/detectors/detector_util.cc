#include <cstdio>

#include "analysis/detectors/step_context.h"

namespace gpuspy::analysis {

std::string FormatPercent(double fraction) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.0f%%", fraction * 100);
  return buf;
}

v1::Severity SeverityFor(double share_of_wall) {
  if (share_of_wall >= kCriticalShareOfWall) return v1::critical;
  if (share_of_wall >= kWarningShareOfWall) return v1::warning;
  return v1::info;
}

}  // namespace gpuspy::analysis
