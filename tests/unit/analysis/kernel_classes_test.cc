// One classification per interned kernel name (analysis/kernel_classes.h): the same answer as
// ClassifyKernel, asked once per name, and never carried over to another process's strings.
#include "analysis/kernel_classes.h"

#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

TEST(KernelClasses, AnswersAsClassifyKernelDoesOncePerName) {
  StringTable strings;
  const StringRef nccl = strings.Intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)");
  const StringRef gemm = strings.Intern("sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32");
  KernelClasses classes;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(classes.Of(strings, nccl), ClassifyKernel(strings.Get(nccl)));
    EXPECT_EQ(classes.Of(strings, gemm), ClassifyKernel(strings.Get(gemm)));
  }
  EXPECT_TRUE(classes.IsCommunication(strings, nccl));
  EXPECT_FALSE(classes.IsCommunication(strings, gemm));
  EXPECT_EQ(classes.size(), 2u);
}

TEST(KernelClasses, AnotherStringTableStartsAfresh) {
  // The same ref names another kernel in another process's table.
  StringTable a, b;
  const StringRef in_a = a.Intern("ncclDevKernel_AllGather_RING_LL(ncclDevComm*)");
  const StringRef in_b = b.Intern("volta_sgemm_128x64_nn");
  ASSERT_EQ(in_a, in_b);
  KernelClasses classes;
  EXPECT_TRUE(classes.IsCommunication(a, in_a));
  EXPECT_FALSE(classes.IsCommunication(b, in_b));
  EXPECT_EQ(classes.size(), 1u);
}

}  // namespace
}  // namespace gpuspy::analysis
