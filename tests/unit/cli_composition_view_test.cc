// The CLI's "what the GPU time is made of" line (step detail) and table (job summary).
#include "viewer/cli/composition_view.h"

#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuspy::cli {
namespace {

KernelClasses Classes(std::initializer_list<std::pair<const char*, double>> shares) {
  KernelClasses out;
  for (const auto& [name, share] : shares) {
    v1::KernelClassTime* c = out.Add();
    c->set_kernel_class(name);
    c->set_share(share);
    c->set_ns(static_cast<int64_t>(share * 10'000'000));
    c->set_count(3);
  }
  return out;
}

TEST(CliCompositionView, StepLineNamesTheLargestClassesAndFoldsTheRest) {
  EXPECT_EQ(GpuTimeLine(Classes({{"gemm_tc", 0.40}, {"elementwise", 0.35}, {"attention", 0.15},
                                 {"other", 0.06}, {"comm", 0.03}, {"triton", 0.01}})),
            "GPU time: gemm_tc 40% · elementwise 35% · attention 15% · other 6% · rest 4%");
  EXPECT_EQ(GpuTimeLine(Classes({{"gemm_tc", 1.0}})), "GPU time: gemm_tc 100%");
  EXPECT_EQ(GpuTimeLine(Classes({{"elementwise", 0.5}, {"gemm_tc", 0.25}, {"comm", 0.24},
                                 {"gemm_fp32", 0.0098}, {"other", 0.0002}})),
            "GPU time: elementwise 50% · gemm_tc 25% · comm 24% · gemm_fp32 1%");
  EXPECT_EQ(GpuTimeLine(Classes({})), "");
}

TEST(CliCompositionView, SummaryTableRanksClassesWithTotals) {
  std::ostringstream out;
  PrintGpuTimeTable(Classes({{"elementwise", 0.55}, {"gemm_tc", 0.45}}), out);
  EXPECT_THAT(out.str(), ::testing::HasSubstr("WHERE THE GPU TIME GOES"));
  EXPECT_THAT(out.str(), ::testing::ContainsRegex("elementwise +55% +5.50 +3"));
  EXPECT_LT(out.str().find("elementwise"), out.str().find("gemm_tc"));
}

}  // namespace
}  // namespace gpuspy::cli
