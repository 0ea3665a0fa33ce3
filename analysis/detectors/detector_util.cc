#include <cstdio>

#include "analysis/detectors/step_context.h"

namespace gpuspy::analysis {

std::string FormatPercent(double fraction) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.0f%%", fraction * 100);
  return buf;
}

Severity SeverityFor(double share_of_wall) {
  if (share_of_wall >= kCriticalShareOfWall) return Severity::kCritical;
  if (share_of_wall >= kWarningShareOfWall) return Severity::kWarning;
  return Severity::kInfo;
}

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kCritical: return "critical";
    case Severity::kWarning: return "warning";
    case Severity::kInfo: return "info";
  }
  return "info";
}

}  // namespace gpuspy::analysis
