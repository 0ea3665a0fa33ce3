// Severity from the share of the step a finding costs: kWarningShareOfWall (5 %) and
// kCriticalShareOfWall (25 %), and the names findings carry.
#include <gtest/gtest.h>

#include "analysis/detectors/step_context.h"

namespace gpuspy::analysis {
namespace {

TEST(Severity, EachThresholdIsWhereTheNextSeverityStarts) {
  EXPECT_EQ(SeverityFor(0.0), Severity::kInfo);
  EXPECT_EQ(SeverityFor(0.0499), Severity::kInfo);
  EXPECT_EQ(SeverityFor(kWarningShareOfWall), Severity::kWarning);
  EXPECT_EQ(SeverityFor(0.2499), Severity::kWarning);
  EXPECT_EQ(SeverityFor(kCriticalShareOfWall), Severity::kCritical);
  EXPECT_EQ(SeverityFor(1.0), Severity::kCritical);
}

TEST(Severity, NamesAreTheValuesOfFindingSeverity) {
  EXPECT_STREQ(SeverityName(Severity::kInfo), "info");
  EXPECT_STREQ(SeverityName(Severity::kWarning), "warning");
  EXPECT_STREQ(SeverityName(Severity::kCritical), "critical");
}

}  // namespace
}  // namespace gpuspy::analysis
