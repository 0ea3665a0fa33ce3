// The report's wording rules (analysis/text_form.h): counts agree with their nouns, and long names
// are shortened at a token boundary with an ellipsis, never inside a word.
#include "analysis/text_form.h"

#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

TEST(CountOf, OneTakesTheSingularEverythingElseThePlural) {
  EXPECT_EQ(CountOf(1, "process", "processes"), "1 process");
  EXPECT_EQ(CountOf(2, "process", "processes"), "2 processes");
  EXPECT_EQ(CountOf(0, "rank", "ranks"), "0 ranks");
}

TEST(ClipName, AShortNameIsLeftAlone) {
  EXPECT_EQ(ClipName("ampere_sgemm_32x128_tn", 40), "ampere_sgemm_32x128_tn");
}

TEST(ClipName, ALongSignatureIsCutAtATokenBoundaryWithAnEllipsis) {
  // Cut at 80 bytes this name ended in "ncclWor"; at a boundary it ends in a whole word.
  const std::string nccl =
      "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long long, ncclWork*)";
  EXPECT_EQ(ClipName(nccl, 80), "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long long…");
  // Never a dangling separator before the ellipsis ("float, float x12" was "float, fl").
  EXPECT_EQ(ClipName("layer_norm_kernel<float, float>(int, float, float const*)", 32),
            "layer_norm_kernel<float, float>…");
  EXPECT_EQ(ClipName("layer_norm_kernel<float, float>(int, float, float const*)", 26),
            "layer_norm_kernel<float…");
}

TEST(ClipName, AQualifiedNameIsOneWord) {
  EXPECT_EQ(ClipName("elementwise_kernel<4, GeluCUDAKernelImpl(at::native::GeluType)>", 42),
            "elementwise_kernel<4, GeluCUDAKernelImpl…");
}

TEST(ClipName, OneIdentifierLongerThanTheLimitIsCutInsideIt) {
  EXPECT_EQ(ClipName("sm90_xmma_gemm_bf16bf16_bf16f32", 10), "sm90_xmma_…");
}

}  // namespace
}  // namespace gpuspy::analysis
