#include "analysis/has_finding.h"

#include <algorithm>

namespace gpuspy::analysis {

bool HasFinding(const v1::StepReport& report, v1::Detector detector) {
  return std::any_of(report.findings().begin(), report.findings().end(),
                     [&](const v1::Finding& f) { return f.detector() == detector; });
}

}  // namespace gpuspy::analysis
