#include <cstdio>

#include "collector/analysis/detectors/step_context.h"

namespace gpuspy::analysis {

void AddEvidence(v1::Finding* f, const std::string& key, const std::string& value) {
  auto* e = f->add_evidence();
  e->set_key(key);
  e->set_value(value);
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
