// Severity from the share of the step a finding costs: kWarningShareOfWall (5 %) and
// kCriticalShareOfWall (25 %), and the names findings carry.
#include <gtest/gtest.h>

#include "analysis/detector_names.h"
#include "analysis/detectors/step_context.h"

namespace gpuspy::analysis {
namespace {

TEST(Severity, EachThresholdIsWhereTheNextSeverityStarts) {
  EXPECT_EQ(SeverityFor(0.0), v1::info);
  EXPECT_EQ(SeverityFor(0.0499), v1::info);
  EXPECT_EQ(SeverityFor(kWarningShareOfWall), v1::warning);
  EXPECT_EQ(SeverityFor(0.2499), v1::warning);
  EXPECT_EQ(SeverityFor(kCriticalShareOfWall), v1::critical);
  EXPECT_EQ(SeverityFor(1.0), v1::critical);
}

TEST(Severity, NamesAreTheValuesOfFindingSeverity) {
  EXPECT_EQ(SeverityName(v1::info), "info");
  EXPECT_EQ(SeverityName(v1::warning), "warning");
  EXPECT_EQ(SeverityName(v1::critical), "critical");
  EXPECT_LT(v1::info, v1::warning) << "the worst of several findings is the largest value";
  EXPECT_LT(v1::warning, v1::critical);
}

}  // namespace
}  // namespace gpuspy::analysis
