// input_stall: the GPU idles at least kMinInputIdleShare (10 %) of the step while the host is in
// the input pipeline (a DataLoader range, or host work before the step's first CUDA call).
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
constexpr const char* kNext = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__";

// 1000 µs: GPU work [0,300), a `gap_us` gap in which the host fetches the next batch, then work
// again; the launch that ends the gap takes its last 5 µs.
DetectorStep DataLoaderGap(int64_t gap_us) {
  DetectorStep s;
  s.Call("cudaLaunchKernel", 0, 5 * us);
  s.Then(testing::kTcGemm, 300 * us);
  const int64_t resume = (300 + gap_us) * us;
  s.Idle(gap_us * us);
  s.Range(kUserAnnotationDomain, kNext, 300 * us, resume - 5 * us);
  s.Call("cudaLaunchKernel", resume - 5 * us, resume);
  s.Then(testing::kTcGemm, 1'000 * us - resume);
  return s;
}

TEST(InputStall, AGapInTheDataLoaderFiresWithWhatTheHostRan) {
  DetectorStep s = DataLoaderGap(400);
  const auto f = s.Run(&DetectInputStall);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->detector(), "input_stall");
  EXPECT_EQ(f->lost_ns(), 395 * us);
  EXPECT_EQ(f->severity(), "critical");
  EXPECT_EQ(Evidence(*f, "leading_gap"), "0 ns");
  EXPECT_THAT(Evidence(*f, "host_activity"), HasSubstr("DataLoader"));
}

TEST(InputStall, JustUnderTheIdleShareDoesNotFire) {
  // kMinInputIdleShare = 10 %: 99 µs waited misses, 101 µs fires.
  EXPECT_FALSE(DataLoaderGap(104).Run(&DetectInputStall).has_value());
  EXPECT_TRUE(DataLoaderGap(106).Run(&DetectInputStall).has_value());
}

TEST(InputStall, WaitingBeforeTheStepsFirstCudaCallIsInput) {
  DetectorStep s;
  s.Idle(200 * us);
  s.Call("cudaLaunchKernel", 195 * us, 200 * us);
  s.Then(testing::kTcGemm, 800 * us);
  const auto f = s.Run(&DetectInputStall);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->title(), HasSubstr("before the step's first CUDA call"));
}

}  // namespace
}  // namespace gpuspy::analysis
