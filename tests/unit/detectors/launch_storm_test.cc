// launch_storm: at least kMinKernels (50) kernels and the GPU idle while the host launches for at
// least kMinLaunchBoundIdleShare (10 %); "tiny" when the median kernel is shorter than
// kShortKernelNs (20 µs).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/detectors/detectors.h"
#include "tests/unit/detectors/detector_test_steps.h"

namespace gpuspy::analysis {
namespace {

using testing::DetectorStep;
using testing::Evidence;
using ::testing::HasSubstr;
constexpr int64_t ns = 1;
constexpr int64_t us = 1'000;

// `kernels` kernels of `kernel_ns`, each launched by a call of `launch_ns` during which the
// stream is idle.
DetectorStep Storm(int kernels, int64_t kernel_ns, int64_t launch_ns) {
  DetectorStep s;
  for (int i = 0; i < kernels; ++i) {
    const int64_t t = s.end_ns();
    s.Call("cudaLaunchKernel", t, t + launch_ns);
    s.Idle(launch_ns).Then(testing::kAdd, kernel_ns);
  }
  return s;
}

TEST(LaunchStorm, TinyKernelsWaitingOnLaunchesFire) {
  DetectorStep s = Storm(300, 8 * us, 2 * us);
  const auto f = s.Run(&DetectLaunchStorm);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->detector(), v1::launch_storm);
  EXPECT_EQ(f->lost_ns(), 300 * 2 * us);
  EXPECT_EQ(f->severity(), v1::warning);  // 20 % of the step
  EXPECT_EQ(Evidence(*f, "launch_calls"), "300");
  EXPECT_THAT(Evidence(*f, "short_kernel"), HasSubstr("x300"));
  EXPECT_THAT(f->fix_hint(), HasSubstr("CUDA graphs"));
}

TEST(LaunchStorm, JustUnderTheKernelCountDoesNotFire) {
  EXPECT_FALSE(Storm(49, 8 * us, 2 * us).Run(&DetectLaunchStorm).has_value());
  EXPECT_TRUE(Storm(50, 8 * us, 2 * us).Run(&DetectLaunchStorm).has_value());
}

TEST(LaunchStorm, LongerKernelsWhoseLaunchesCannotKeepUpAreNotCalledTiny) {
  // 20 us kernels with 5 us launch gaps: 20 % of the step idle waiting for launches. Before,
  // no finding owned it and the step read healthy.
  const auto f = Storm(300, 20 * us, 5 * us).Run(&DetectLaunchStorm);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->title(), HasSubstr("300 kernels with median 20.0 us"));
  EXPECT_THAT(f->title(), HasSubstr("cannot keep up"));
  EXPECT_THAT(f->fix_hint(), HasSubstr("contended CPU"));
  const auto tiny = Storm(300, 20 * us - ns, 5 * us).Run(&DetectLaunchStorm);
  ASSERT_TRUE(tiny.has_value());
  EXPECT_THAT(tiny->title(), HasSubstr("300 tiny kernels"));
}

TEST(LaunchStorm, JustUnderTheLaunchBoundIdleShareDoesNotFire) {
  // 9.9 % of the step idle in launches; 10 % fires.
  EXPECT_FALSE(Storm(300, 9'010 * ns, 990 * ns).Run(&DetectLaunchStorm).has_value());
  EXPECT_TRUE(Storm(300, 9 * us, 1 * us).Run(&DetectLaunchStorm).has_value());
}

}  // namespace
}  // namespace gpuspy::analysis
