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
using ::testing::Not;
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
  EXPECT_EQ(f->detector(), v1::input_stall);
  EXPECT_EQ(f->lost_ns(), 395 * us);
  EXPECT_EQ(f->severity(), v1::critical);
  EXPECT_EQ(Evidence(*f, "leading_gap"), "0 ns");
  EXPECT_THAT(Evidence(*f, "host_activity"), HasSubstr("DataLoader"));
}

TEST(InputStall, JustUnderTheIdleShareDoesNotFire) {
  // kMinInputIdleShare = 10 %: 99 µs waited misses, 101 µs fires.
  EXPECT_FALSE(DataLoaderGap(104).Run(&DetectInputStall).has_value());
  EXPECT_TRUE(DataLoaderGap(106).Run(&DetectInputStall).has_value());
}

// `gap_us` of host work no range names before the step's first CUDA call, then `work_us` of GPU
// work.
DetectorStep UnnamedLeadingGap(int64_t gap_us, int64_t work_us) {
  DetectorStep s;
  s.Idle(gap_us * us);
  s.Call("cudaLaunchKernel", (gap_us - 5) * us, gap_us * us);
  s.Then(testing::kTcGemm, work_us * us);
  return s;
}

TEST(InputStall, WaitingBeforeTheStepsFirstCudaCallFiresWithoutNamingTheDataLoader) {
  // 3 ms of unnamed host work before the first launch: waiting for a batch or set-up (weight
  // initialisation); nothing says which, so the fix must not send the user to the DataLoader.
  const auto f = UnnamedLeadingGap(3'000, 5'000).Run(&DetectInputStall);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->title(), HasSubstr("before the step's first CUDA call"));
  EXPECT_THAT(f->title(), HasSubstr("no range names"));
  EXPECT_EQ(Evidence(*f, "in_data_loading_ranges"), "0 ns");
  EXPECT_THAT(f->fix_hint(), Not(HasSubstr("DataLoader")));
  EXPECT_THAT(f->fix_hint(), HasSubstr("weight initialisation"));
}

TEST(InputStall, AShortUnnamedLeadingGapDoesNotFire) {
  // 0.57 ms before the first launch of a 2.6 ms step is 22 % of it, but without a data-loading
  // range it is under kMinUnnamedInputNs (2 ms): no finding.
  EXPECT_FALSE(UnnamedLeadingGap(570, 2'000).Run(&DetectInputStall).has_value());
  EXPECT_TRUE(UnnamedLeadingGap(2'100, 2'000).Run(&DetectInputStall).has_value());
}

TEST(InputStall, ADataLoaderRangeIsTheEvidenceTheHintNeeds) {
  const auto f = DataLoaderGap(400).Run(&DetectInputStall);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->title(), HasSubstr("waiting for input"));
  EXPECT_THAT(f->fix_hint(), HasSubstr("DataLoader num_workers"));
  EXPECT_EQ(Evidence(*f, "in_data_loading_ranges"), "395.0 us");
}

}  // namespace
}  // namespace gpuspy::analysis
