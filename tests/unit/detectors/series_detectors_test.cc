// The series detectors (analysis/detectors/series_detectors.h): warm-up, outlier steps and new
// kernels, each fires past its threshold and not just under it.
#include "analysis/detectors/series_detectors.h"

#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

constexpr int64_t ms = 1'000'000;

TEST(Warmup, ALeadingStepAbove125PercentOfTheMedianIsWarmup) {
  EXPECT_TRUE(IsWarmupWall(126 * ms, 100 * ms));
  EXPECT_FALSE(IsWarmupWall(125 * ms, 100 * ms));  // near miss: at the factor
  const v1::Finding f = WarmupFinding({300 * ms, 100 * ms, {"k1", "k2"}, nullptr});
  EXPECT_EQ(f.detector(), v1::warmup);
  EXPECT_EQ(f.lost_ns(), 200 * ms);
  EXPECT_EQ(f.severity(), v1::info);
}

TEST(Warmup, SaysWhatTheDriverDidInTheStep) {
  v1::Finding driver;
  driver.set_detector(v1::cuda_api_bound);
  driver.set_lost_ns(150 * ms);
  driver.set_title("module loading");
  const v1::Finding f = WarmupFinding({300 * ms, 100 * ms, {}, &driver});
  bool said = false;
  for (const v1::Evidence& e : f.evidence()) said |= e.key() == "in_cuda_calls";
  EXPECT_TRUE(said);
}

TEST(OutlierStep, FiresPastOneAndAHalfTimesTheMedianAndNamesNewKernels) {
  const auto f = DetectOutlierStep({160 * ms, 100 * ms, {"recompiled_kernel"}, nullptr});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 60 * ms);
  EXPECT_EQ(f->title(), "step 160.0 ms is 1.6x the median 100.0 ms");
  EXPECT_NE(f->fix_hint().find("recompile"), std::string::npos);
  EXPECT_FALSE(DetectOutlierStep({150 * ms, 100 * ms, {}, nullptr}).has_value());  // at the factor
}

TEST(NewKernels, FiresOnlyWhenAKernelIsNew) {
  const auto f = DetectNewKernels({100 * ms, 100 * ms, {"k"}, nullptr});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 0);
  EXPECT_FALSE(DetectNewKernels({100 * ms, 100 * ms, {}, nullptr}).has_value());
}

}  // namespace
}  // namespace gpuspy::analysis
