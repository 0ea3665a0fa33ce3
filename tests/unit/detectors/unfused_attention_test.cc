// unfused_attention: GEMM → (mask) → softmax → (dropout) → GEMM repeating per layer with no fused
// attention kernel; near misses just under each threshold.
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

// One eager attention layer: QKV projection, bmm, masked_fill, softmax, dropout, bmm, output
// projection. `between` memory-bound kernels before the softmax (masked_fill and scales).
void Layer(DetectorStep& s, int between = 1) {
  s.Then(testing::kTcGemm, 50 * us).Then(testing::kBmm, 30 * us);
  for (int i = 0; i < between; ++i) s.Then(testing::kMaskedFill, 20 * us);
  s.Then(testing::kSoftmax, 30 * us)
      .Then(testing::kDropout, 20 * us)
      .Then(testing::kBmm, 30 * us)
      .Then(testing::kTcGemm, 50 * us);
}

TEST(UnfusedAttention, FiresOnRepeatingBmmSoftmaxBmm) {
  DetectorStep s;
  for (int i = 0; i < 4; ++i) Layer(s);
  const auto f = s.Run(&DetectUnfusedAttention);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->detector(), v1::unfused_attention);
  // masked_fill + softmax + dropout between the bmms: 70 µs per layer.
  EXPECT_EQ(f->lost_ns(), 280 * us);
  EXPECT_EQ(Evidence(*f, "patterns_in_step"), "4");
  EXPECT_EQ(Evidence(*f, "per_pattern"), "130.0 us");
  EXPECT_THAT(Evidence(*f, "pattern"),
              HasSubstr("gemm → elementwise_kernel<masked_fill_kernel> → softmax_warp_forward → "
                        "fused_dropout_kernel_vec → gemm ×4"));
  EXPECT_THAT(f->fix_hint(), HasSubstr("scaled_dot_product_attention"));
}

TEST(UnfusedAttention, FusedAttentionInTheStepMeansNoFinding) {
  DetectorStep s;
  for (int i = 0; i < 4; ++i) Layer(s);
  s.Then(testing::kFlash, 10 * us);
  EXPECT_FALSE(s.Run(&DetectUnfusedAttention).has_value());
}

TEST(UnfusedAttention, OnePatternIsNotAPerLayerRepeat) {
  DetectorStep s;
  Layer(s);
  EXPECT_FALSE(s.Run(&DetectUnfusedAttention).has_value());
}

TEST(UnfusedAttention, PatternShareJustUnderThresholdDoesNotFire) {
  auto build = [](int64_t padding_ns) {
    DetectorStep s;
    Layer(s);
    Layer(s);  // patterns: 2 × 130 µs; the projections add 4 × 50 µs
    s.Then(testing::kTcGemm, padding_ns);
    return s;
  };
  DetectorStep under = build(2'170 * us);  // 260 / 2630 = 9.9 %
  EXPECT_FALSE(under.Run(&DetectUnfusedAttention).has_value());
  DetectorStep over = build(2'100 * us);  // 260 / 2560 = 10.2 %
  EXPECT_TRUE(over.Run(&DetectUnfusedAttention).has_value());
}

TEST(UnfusedAttention, TooManyKernelsBetweenGemmAndSoftmaxIsNotThePattern) {
  DetectorStep near;
  for (int i = 0; i < 4; ++i) Layer(near, 3);  // 3 kernels before the softmax: still attention
  EXPECT_TRUE(near.Run(&DetectUnfusedAttention).has_value());
  DetectorStep far;
  for (int i = 0; i < 4; ++i) Layer(far, 4);
  EXPECT_FALSE(far.Run(&DetectUnfusedAttention).has_value());
}

}  // namespace
}  // namespace gpuspy::analysis
