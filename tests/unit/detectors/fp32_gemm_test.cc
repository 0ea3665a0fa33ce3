// fp32_gemm: SIMT FP32 GEMMs (sgemm, scudnn) take at least kMinSimtShareOfKernels (20 %) of the
// step's kernel time; half their time counts as lost (kAssumedTensorCoreSpeedup = 2).
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
constexpr const char* kSgemm = "ampere_sgemm_128x64_tn";

// 1000 µs of kernels, `sgemm_us` of them SIMT FP32 GEMM, the rest tensor-core GEMM.
DetectorStep Gemms(int64_t sgemm_us) {
  DetectorStep s;
  s.Then(kSgemm, sgemm_us * us).Then(testing::kTcGemm, (1'000 - sgemm_us) * us);
  return s;
}

TEST(Fp32Gemm, SimtGemmsTakingAThirdOfKernelTimeFire) {
  DetectorStep s = Gemms(300);
  const auto f = s.Run(&DetectFp32Gemm);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->detector(), v1::fp32_gemm);
  EXPECT_EQ(f->lost_ns(), 150 * us);
  EXPECT_EQ(f->severity(), v1::warning);  // 15 % of the step
  EXPECT_THAT(Evidence(*f, "kernel"), HasSubstr(kSgemm));
  EXPECT_THAT(f->fix_hint(), HasSubstr("TF32"));
}

TEST(Fp32Gemm, JustUnderTheShareOfKernelTimeDoesNotFire) {
  EXPECT_FALSE(Gemms(199).Run(&DetectFp32Gemm).has_value());  // 19.9 % of kernel time
  EXPECT_TRUE(Gemms(200).Run(&DetectFp32Gemm).has_value());   // 20 %
}

TEST(Fp32Gemm, TensorCoreGemmsAloneDoNotFire) {
  EXPECT_FALSE(Gemms(0).Run(&DetectFp32Gemm).has_value());
}

}  // namespace
}  // namespace gpuspy::analysis
