// host_bound: the GPU waits for host work that is neither CUDA calls nor the input pipeline;
// the finding says how long, between which calls, and what the host ran (from host ranges).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "collector/analysis/detectors/detectors.h"
#include "tests/unit/detectors/detector_test_steps.h"

namespace gpuspy::analysis {
namespace {

using testing::DetectorStep;
using testing::Evidence;
using ::testing::HasSubstr;
constexpr int64_t us = 1'000;

// 1000 µs: GPU work [0,300) and [300+gap, ...), a host gap mid-step between two launches.
DetectorStep MidStepGap(int64_t gap_us) {
  DetectorStep s;
  s.Call("cudaLaunchKernel", 0, 5 * us, "train.py:40 forward");
  s.Then(testing::kTcGemm, 300 * us);
  const int64_t resume = 300 * us + gap_us * us;
  s.Idle(gap_us * us);
  s.Call("cudaLaunchKernel", resume - 5 * us, resume, "train.py:44 forward");
  s.Then(testing::kTcGemm, 1'000 * us - resume);
  return s;
}

TEST(HostBound, AMidStepGapIsTheHostWithTheOpItRanAndTheCallsAroundIt) {
  DetectorStep s = MidStepGap(400);
  s.Range(kCpuOpDomain, "aten::nonzero", 310 * us, 690 * us);
  s.Range(kCpuOpDomain, "aten::empty", 320 * us, 330 * us);  // inside nonzero: nonzero owns it
  const auto f = s.Run(&DetectHostBound);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(s.report().breakdown().idle_input_ns(), 0);
  EXPECT_EQ(f->lost_ns(), 395 * us);  // the gap, minus the launch call at its end
  EXPECT_THAT(f->title(), HasSubstr("mostly in aten::nonzero"));
  EXPECT_THAT(Evidence(*f, "host_activity"), HasSubstr("aten::nonzero = 380.0 us"));
  EXPECT_THAT(Evidence(*f, "longest_gap"),
              HasSubstr("between cudaLaunchKernel at train.py:40 forward and cudaLaunchKernel at "
                        "train.py:44 forward"));
}

TEST(HostBound, TheLineWhereTheHostComesBackIsNamedWithItsHostTime) {
  DetectorStep s = MidStepGap(400);  // the launch ending the gap is at train.py:44 forward
  const auto f = s.Run(&DetectHostBound);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(Evidence(*f, "resumed_at"), "train.py:44 forward x1 after 395.0 us of host work");
  for (const auto& e : f->evidence()) {
    if (e.key() == "resumed_at") {
      EXPECT_EQ(e.call_site(), "train.py:44 forward");
    }
  }
  EXPECT_THAT(f->fix_hint(), HasSubstr("comes back to the GPU at train.py:44 forward"));
}

TEST(HostBound, AGapEndedByACallWithoutASiteNamesNoLine) {
  DetectorStep s;
  s.Call("cudaLaunchKernel", 0, 5 * us, "train.py:40 forward");
  s.Then(testing::kTcGemm, 300 * us);
  s.Idle(400 * us);
  s.Call("cudaLaunchKernel", 695 * us, 700 * us);  // not sampled: no site
  s.Then(testing::kTcGemm, 300 * us);
  const auto f = s.Run(&DetectHostBound);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(Evidence(*f, "resumed_at"), "");
}

TEST(HostBound, JustUnderTheShareDoesNotFire) {
  // kMinHostBoundShare = 10 %: a 104 µs gap (99 µs waited, the rest is the launch) misses...
  EXPECT_FALSE(MidStepGap(104).Run(&DetectHostBound).has_value());
  // ...a 106 µs one (101 µs) fires.
  EXPECT_TRUE(MidStepGap(106).Run(&DetectHostBound).has_value());
}

TEST(HostBound, TheDrainAfterASyncIsTheSyncsNotTheHosts) {
  DetectorStep s;
  s.Call("cudaLaunchKernel", 0, 5 * us);
  s.Then(testing::kTcGemm, 300 * us);
  s.Call("cudaStreamSynchronize", 100 * us, 300 * us);
  s.Idle(400 * us);  // the host works after the sync returned: the emptied queue exposes it
  s.Call("cudaLaunchKernel", 695 * us, 700 * us);
  s.Then(testing::kTcGemm, 300 * us);
  EXPECT_FALSE(s.Run(&DetectHostBound).has_value());
  // The breakdown says the same: the drain is sync time, and sync_stall loses exactly that.
  EXPECT_EQ(s.report().breakdown().idle_host_other_ns(), 0);
  EXPECT_EQ(s.report().breakdown().idle_sync_blocked_ns(), 395 * us);
  const auto sync = s.Run(&DetectSyncStall);
  ASSERT_TRUE(sync.has_value());
  EXPECT_EQ(sync->lost_ns(), s.report().breakdown().idle_sync_blocked_ns());
}

TEST(HostBound, ADataLoaderGapIsInputNotHost) {
  DetectorStep s = MidStepGap(400);
  s.Range(kUserAnnotationDomain, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
          300 * us, 700 * us);
  EXPECT_FALSE(s.Run(&DetectHostBound).has_value());
  EXPECT_EQ(s.report().breakdown().idle_input_ns(), 395 * us);
  const auto input = s.Run(&DetectInputStall);
  ASSERT_TRUE(input.has_value());
  EXPECT_EQ(input->lost_ns(), 395 * us);
  EXPECT_THAT(Evidence(*input, "host_activity"), HasSubstr("DataLoader"));
}

}  // namespace
}  // namespace gpuspy::analysis
