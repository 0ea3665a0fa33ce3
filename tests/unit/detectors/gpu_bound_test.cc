// gpu_bound: fires when compute keeps the GPU busy ≥ 90 % of the step; its evidence and hint
// name the kernel classes that make up the GPU time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/detectors/detectors.h"
#include "tests/unit/detectors/detector_test_steps.h"

namespace gpuspy::analysis {
namespace {

using testing::DetectorStep;
using testing::Evidence;
using ::testing::HasSubstr;
constexpr int64_t us = 1'000;

DetectorStep GemmStep() {
  DetectorStep s;
  for (int i = 0; i < 10; ++i) s.Then(testing::kTcGemm, 80 * us).Then(testing::kAdd, 20 * us);
  return s;  // 1000 µs of kernels: gemm_tc 80 %, elementwise 20 %
}

TEST(GpuBound, NamesTheKernelClassesAndTheLeverForTheLargest) {
  DetectorStep s = GemmStep();
  const auto f = s.Run(&DetectGpuBound);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 0);
  EXPECT_EQ(Evidence(*f, "gpu_time"), "gemm_tc 80% · elementwise 20%");
  EXPECT_THAT(f->fix_hint(), HasSubstr("tensor-core GEMMs lead"));
  // The renderers put "gpu_bound: " before the title: it must not say "GPU-bound" again.
  EXPECT_EQ(f->title(), "the GPU runs compute kernels 100% of the step");
}

TEST(GpuBound, CopiesAreNotComputeAStepBusyCopyingIsNotGpuBound) {
  // 1000 µs: 100 µs of GEMM, 850 µs of host->device copies, 50 µs of GEMM. The GPU is busy the
  // whole step, but mostly copying: copy_dominated's, not a healthy GPU-bound step.
  DetectorStep s;
  s.Then(testing::kTcGemm, 100 * us);
  s.Copy(CopyKind::kHtoD, 850 * us, 256 << 20);
  s.Then(testing::kTcGemm, 50 * us);
  EXPECT_FALSE(s.Run(&DetectGpuBound).has_value());
}

TEST(GpuBound, BusyJustUnderThresholdDoesNotFire) {
  DetectorStep s = GemmStep();
  EXPECT_FALSE(s.Run(&DetectGpuBound, 1'112 * us).has_value());  // 89.9 % busy
  EXPECT_TRUE(s.Run(&DetectGpuBound, 1'110 * us).has_value());   // 90.1 % busy
}

}  // namespace
}  // namespace gpuspy::analysis
