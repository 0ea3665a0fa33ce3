// sync_stall: the host blocks on the GPU for at least kMinBlockedShare (10 %) of the step, or in
// at least kManyBlockingCalls (10) calls, and the GPU idles because of it (while blocked, and in
// the drain after each call) for at least kMinLostShare (5 %).
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

// 1000 µs: a kernel of 500 µs, a cudaStreamSynchronize of `sync_us` ending with it, then the
// host works `drain_us` before it launches the rest (the emptied queue leaves the GPU idle). The
// drain is the sync's while it is no longer than the GPU work the sync waited for (`sync_us`).
DetectorStep SyncThenDrain(int64_t sync_us, int64_t drain_us) {
  DetectorStep s;
  s.Call("cudaLaunchKernel", 0, 5 * us);
  s.Then(testing::kTcGemm, 500 * us);
  s.Call("cudaStreamSynchronize", (500 - sync_us) * us, 500 * us, "train.py:51 loss.item()");
  s.Idle(drain_us * us);
  const int64_t resume = (500 + drain_us) * us;
  s.Call("cudaLaunchKernel", resume - 5 * us, resume);
  s.Then(testing::kTcGemm, 1'000 * us - resume);
  return s;
}

// `calls` syncs of 8 µs each (waiting for the end of a kernel), each followed by an 8 µs drain,
// in a 1000 µs step: blocked under 10 %, so only the call count makes them matter.
DetectorStep ManyShortSyncs(int calls) {
  DetectorStep s;
  for (int i = 0; i < calls; ++i) {
    s.Then(testing::kTcGemm, 40 * us);
    s.Call("cudaStreamSynchronize", s.end_ns() - 8 * us, s.end_ns());
    s.Idle(8 * us);
  }
  s.Then(testing::kTcGemm, 1'000 * us - s.end_ns());
  return s;
}

TEST(SyncStall, ASyncFollowedByADrainFiresWithItsCallSite) {
  DetectorStep s = SyncThenDrain(400, 400);
  const auto f = s.Run(&DetectSyncStall);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->detector(), v1::sync_stall);
  EXPECT_GE(f->lost_ns(), 395 * us);
  EXPECT_EQ(f->severity(), v1::critical);
  EXPECT_THAT(f->title(), HasSubstr("mostly in cudaStreamSynchronize"));
  EXPECT_EQ(Evidence(*f, "call_site"), "train.py:51 loss.item() x1 (0.4 ms)");
  EXPECT_THAT(f->fix_hint(), HasSubstr(".item()"));
  // The site as data too: which line (for the viewer's link to its calls), and how many calls.
  for (const v1::Evidence& e : f->evidence()) {
    if (e.key() != "call_site") continue;
    EXPECT_EQ(e.call_site(), "train.py:51 loss.item()");
    EXPECT_EQ(e.quantity(), 1);
    EXPECT_EQ(e.unit(), "count");
  }
}

// 1000 µs: a kernel of 100 µs, then a pageable copy of `kind` (300 µs) whose cudaMemcpy blocks
// the host for all of it, a 300 µs drain, and compute again.
DetectorStep BlockingCopy(CopyKind kind) {
  DetectorStep s;
  s.Then(testing::kTcGemm, 100 * us);
  s.Copy(kind, 300 * us, 64 << 20, MemoryKind::kPageable);
  s.IssuedBy("cudaMemcpyAsync", 100 * us, 400 * us, "train.py:20 step");
  s.Idle(300 * us);
  s.Call("cudaLaunchKernel", 695 * us, 700 * us);
  s.Then(testing::kTcGemm, 300 * us);
  return s;
}

TEST(SyncStall, AHostToDeviceCopyIsFixedByPinnedMemoryNotByAvoidingItem) {
  const auto f = BlockingCopy(CopyKind::kHtoD).Run(&DetectSyncStall);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->fix_hint(), HasSubstr("host->device"));
  EXPECT_THAT(f->fix_hint(), HasSubstr("pin_memory"));
  EXPECT_THAT(f->fix_hint(), HasSubstr("non_blocking=True"));
  EXPECT_THAT(f->fix_hint(), ::testing::Not(HasSubstr(".item()")));
}

TEST(SyncStall, ADeviceToHostCopyIsItemOrCpu) {
  const auto f = BlockingCopy(CopyKind::kDtoH).Run(&DetectSyncStall);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->fix_hint(), HasSubstr("device->host"));
  EXPECT_THAT(f->fix_hint(), HasSubstr(".item()"));
  EXPECT_THAT(f->fix_hint(), ::testing::Not(HasSubstr("host->device")));
}

TEST(SyncStall, JustUnderTheBlockedShareDoesNotFire) {
  // One call, GPU idle long after it: blocked 9.9 % misses, 10 % fires.
  EXPECT_FALSE(SyncThenDrain(99, 400).Run(&DetectSyncStall).has_value());
  EXPECT_TRUE(SyncThenDrain(100, 400).Run(&DetectSyncStall).has_value());
}

TEST(SyncStall, ARocmTracesHipSyncAndLaunchesAreReadAsCudas) {
  DetectorStep s;
  s.Call("hipLaunchKernel", 0, 5 * us);
  s.Then(testing::kTcGemm, 500 * us);
  s.Call("hipDeviceSynchronize", 100 * us, 500 * us, "train.py:51 loss.item()");
  s.Idle(300 * us);
  s.Call("hipLaunchKernel", 795 * us, 800 * us);
  s.Then(testing::kTcGemm, 200 * us);
  const auto f = s.Run(&DetectSyncStall);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 295 * us);  // the drain up to the launch, which is launch-bound
  EXPECT_EQ(s.report().breakdown().idle_launch_bound_ns(), 5 * us);
}

TEST(SyncStall, HostWorkAfterTheSyncBeyondTheWorkItWaitedForIsNotItsLoss) {
  // Waits 100 µs for the GPU, then 400 µs of host work: without the wait the host would only
  // have been 100 µs ahead, so the sync loses 100 µs (less nothing: the launch is later), the
  // host the rest.
  DetectorStep s = SyncThenDrain(100, 400);
  const auto f = s.Run(&DetectSyncStall);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 100 * us);
  EXPECT_EQ(s.report().breakdown().idle_host_other_ns(), 295 * us);
}

TEST(SyncStall, JustUnderTheBlockingCallCountDoesNotFire) {
  EXPECT_FALSE(ManyShortSyncs(9).Run(&DetectSyncStall).has_value());
  EXPECT_TRUE(ManyShortSyncs(10).Run(&DetectSyncStall).has_value());
}

TEST(SyncStall, JustUnderTheLostShareDoesNotFire) {
  // Blocked 20 % of the step, but the GPU barely idles: lost just under 5 % misses. The drain
  // is the gap less the 5 µs launch call that ends it (launch-bound, not the sync's).
  EXPECT_FALSE(SyncThenDrain(200, 54).Run(&DetectSyncStall).has_value());
  EXPECT_TRUE(SyncThenDrain(200, 56).Run(&DetectSyncStall).has_value());
}

}  // namespace
}  // namespace gpuspy::analysis
