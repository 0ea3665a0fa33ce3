// gpu_idle: GPU idle no other detector explains is reported from 30 % of the step, never hidden.
#include <gtest/gtest.h>

#include "analysis/detectors/detectors.h"
#include "tests/unit/detectors/detector_test_steps.h"

namespace gpuspy::analysis {
namespace {

using testing::DetectorStep;
constexpr int64_t us = 1'000;

TEST(GpuIdle, IdleOverAThirdOfTheStepFiresWithAllOfItLost) {
  DetectorStep s;
  s.Then(testing::kTcGemm, 600 * us).Idle(400 * us);
  const auto f = s.Run(&DetectGpuIdle);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->detector(), v1::gpu_idle);
  EXPECT_EQ(f->lost_ns(), 400 * us);
  EXPECT_EQ(f->evidence_size(), 5);  // the idle by cause, so none is seen to dominate
}

TEST(GpuIdle, JustUnderThirtyPercentIdleDoesNotFire) {
  DetectorStep s;
  s.Then(testing::kTcGemm, 701 * us).Idle(299 * us);
  EXPECT_FALSE(s.Run(&DetectGpuIdle).has_value());
}

}  // namespace
}  // namespace gpuspy::analysis
