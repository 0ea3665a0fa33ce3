// unfused_elementwise: chains of memory-bound kernels between GEMMs in a busy step; a near miss
// just under each threshold (memory-bound share, compute busy, estimated saving).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/detectors/detectors.h"
#include "analysis/kernel_composition.h"
#include "tests/unit/detectors/detector_test_steps.h"

namespace gpuspy::analysis {
namespace {

using testing::DetectorStep;
using testing::Evidence;
using ::testing::HasSubstr;
constexpr int64_t us = 1'000;

// An eager MLP layer: GEMM, then LayerNorm → GELU → dropout → add, each a memory pass.
void Layers(DetectorStep& s, int layers, int64_t gemm_ns, int64_t elementwise_ns) {
  for (int i = 0; i < layers; ++i) {
    s.Then(testing::kTcGemm, gemm_ns)
        .Then(testing::kLayerNorm, elementwise_ns)
        .Then(testing::kGelu, elementwise_ns)
        .Then(testing::kDropout, elementwise_ns)
        .Then(testing::kAdd, elementwise_ns);
  }
}

TEST(UnfusedElementwise, FiresOnEagerMlpChainsWithSavingEstimateAndChains) {
  DetectorStep s;
  Layers(s, 10, 60 * us, 15 * us);  // 50 % memory-bound, chains of 4
  const auto f = s.Run(&DetectUnfusedElementwise);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->detector(), v1::unfused_elementwise);
  // Each chain of 4 × 15 µs would make one pass: saving 60 × (1 − 1/4) = 45 µs per layer.
  EXPECT_EQ(f->lost_ns(), 450 * us);
  EXPECT_EQ(Evidence(*f, "memory_bound_kernels"), "40");
  EXPECT_EQ(Evidence(*f, "memory_bound_share_of_kernel_time"), "50%");
  EXPECT_THAT(Evidence(*f, "chain"),
              HasSubstr("vectorized_layer_norm_kernel → vectorized_elementwise_kernel<"));
  EXPECT_THAT(Evidence(*f, "chain"), HasSubstr("×10"));
  EXPECT_THAT(Evidence(*f, "estimated_saving"), HasSubstr("estimate"));
  EXPECT_THAT(f->fix_hint(), HasSubstr("torch.compile"));
}

TEST(UnfusedElementwise, MemoryBoundShareJustUnderThresholdDoesNotFire) {
  DetectorStep under;
  Layers(under, 10, 56 * us, 11 * us);  // 44 %
  EXPECT_FALSE(under.Run(&DetectUnfusedElementwise).has_value());
  DetectorStep over;
  Layers(over, 10, 54 * us, 11'500);  // 46 %
  EXPECT_TRUE(over.Run(&DetectUnfusedElementwise).has_value());
}

TEST(UnfusedElementwise, ComputeBusyJustUnderThresholdDoesNotFire) {
  DetectorStep s;
  Layers(s, 10, 60 * us, 15 * us);  // 1200 µs of kernels
  EXPECT_FALSE(s.Run(&DetectUnfusedElementwise, 1'520 * us).has_value());  // 78.9 % busy
  EXPECT_TRUE(s.Run(&DetectUnfusedElementwise, 1'490 * us).has_value());   // 80.5 % busy
}

TEST(UnfusedElementwise, SavingJustUnderThresholdDoesNotFire) {
  // Mostly lone elementwise kernels (nothing to fuse) and one chain of two.
  auto build = [](int64_t chain_kernel_ns) {
    DetectorStep s;
    s.Then(testing::kGelu, chain_kernel_ns).Then(testing::kAdd, chain_kernel_ns);
    for (int i = 0; i < 9; ++i) s.Then(testing::kTcGemm, 50 * us).Then(testing::kAdd, 50 * us);
    return s;
  };
  DetectorStep under = build(49 * us);  // saving 49 µs of 998 µs: 4.9 %
  EXPECT_FALSE(under.Run(&DetectUnfusedElementwise).has_value());
  DetectorStep over = build(52 * us);  // 52 µs of 1004 µs: 5.2 %
  const auto f = over.Run(&DetectUnfusedElementwise);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 52 * us);
}

TEST(UnfusedElementwise, TritonKernelsAreAlreadyFused) {
  DetectorStep s;
  for (int i = 0; i < 10; ++i) {
    s.Then(testing::kTcGemm, 60 * us).Then("triton_poi_fused_add_gelu_native_dropout_0", 60 * us);
  }
  EXPECT_FALSE(s.Run(&DetectUnfusedElementwise).has_value());
}

// What torch.optim's foreach=True and fused=True run: one multi_tensor_apply launch per op for
// every parameter at once. Already fused: telling the user to pass fused=True would be wrong.
constexpr const char* kForeachAdam =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>>";

TEST(UnfusedElementwise, ForeachAndFusedOptimizerKernelsAreNoChain) {
  DetectorStep s;
  for (int i = 0; i < 10; ++i) {
    s.Then(testing::kTcGemm, 40 * us).Then(kForeachAdam, 30 * us).Then(kForeachAdam, 30 * us);
  }
  EXPECT_FALSE(s.Run(&DetectUnfusedElementwise).has_value());
  // Near miss: the same time in eager elementwise kernels is an unfused chain.
  DetectorStep eager;
  for (int i = 0; i < 10; ++i) {
    eager.Then(testing::kTcGemm, 40 * us).Then(testing::kAdd, 30 * us).Then(testing::kAdd, 30 * us);
  }
  EXPECT_TRUE(eager.Run(&DetectUnfusedElementwise).has_value());
}

// A loop of one op over many tensors (kMinLoopOverTensors of the same kernel in a row: a norm of
// each gradient) reads other data at each pass: no chain to fuse into one pass. Three in a row can
// be a chain (a + b + c + d): the near miss fires.
TEST(UnfusedElementwise, OneOpOverManyTensorsIsNoChain) {
  DetectorStep loop;
  for (int i = 0; i < 10; ++i) {
    loop.Then(testing::kTcGemm, 40 * us);
    for (size_t k = 0; k < kMinLoopOverTensors; ++k) loop.Then(testing::kAdd, 20 * us);
  }
  EXPECT_FALSE(loop.Run(&DetectUnfusedElementwise).has_value());
  DetectorStep chain;
  for (int i = 0; i < 10; ++i) {
    chain.Then(testing::kTcGemm, 40 * us);
    for (size_t k = 0; k + 1 < kMinLoopOverTensors; ++k) chain.Then(testing::kAdd, 27 * us);
  }
  EXPECT_TRUE(chain.Run(&DetectUnfusedElementwise).has_value());
}

}  // namespace
}  // namespace gpuspy::analysis
