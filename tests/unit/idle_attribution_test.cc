// The one idle-attribution rule (analysis/idle_attribution.h): every idle nanosecond
// gets exactly one cause, and input is told from other host work by what the host was in.
#include "analysis/idle_attribution.h"

#include <gtest/gtest.h>

#include <random>

#include "analysis/detectors/detectors.h"
#include "tests/unit/detectors/detector_test_steps.h"

namespace gpuspy::analysis {
namespace {

using testing::DetectorStep;
constexpr int64_t us = 1'000;

TEST(IdleAttribution, CausesAreDisjointAndSumToTheIdleTimeOnRandomSteps) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> len(1, 200);
  const char* calls[] = {"cudaLaunchKernel", "cudaStreamSynchronize", "cudaMemcpyAsync",
                         "cudaEventRecord", "cudaMalloc", "cudaFree"};
  for (int trial = 0; trial < 50; ++trial) {
    DetectorStep s;
    for (int i = 0; i < 20; ++i) {
      if (rng() % 2) s.Idle(len(rng) * us);
      const int64_t t = s.end_ns();
      s.Call(calls[rng() % 4], t - len(rng) * us / 2, t + len(rng) * us / 2);
      if (rng() % 3 == 0) s.Range(kCpuOpDomain, "aten::op", t - len(rng) * us, t + len(rng) * us);
      if (rng() % 7 == 0) s.Range(kUserAnnotationDomain, "## data_load ##", t, t + len(rng) * us);
      s.Then(testing::kAdd, len(rng) * us);
    }
    s.Run(&DetectHostBound);
    const v1::StepBreakdown& b = s.report().breakdown();
    EXPECT_EQ(b.idle_sync_blocked_ns() + b.idle_launch_bound_ns() + b.idle_input_ns() +
                  b.idle_host_other_ns() + b.idle_cuda_call_ns(),
              b.gpu_idle_ns())
        << "trial " << trial;
  }
}

TEST(IdleAttribution, CudaFreeWaitsForTheGpuThenTheRestIsTheDriversOwnWork) {
  DetectorStep s;
  s.Call("cudaLaunchKernel", 0, 5 * us);
  s.Then(testing::kTcGemm, 300 * us);
  s.Call("cudaFree", 100 * us, 1'300 * us);  // waits for the GEMM, then frees for 1 ms
  s.Idle(1'000 * us);
  s.Call("cudaLaunchKernel", 1'300 * us, 1'305 * us);
  s.Then(testing::kTcGemm, 700 * us);
  s.Run(&DetectInputStall);
  const auto& b = s.report().breakdown();
  // Waiting: to the GEMM's end plus kWaitReturnSlackNs; the driver's work: the rest of the call.
  EXPECT_EQ(b.idle_sync_blocked_ns(), kWaitReturnSlackNs);
  EXPECT_EQ(b.idle_cuda_call_ns(), 1'000 * us - kWaitReturnSlackNs);
  EXPECT_EQ(b.idle_host_other_ns() + b.idle_launch_bound_ns() + b.idle_input_ns(), 0);
}

TEST(IdleAttribution, AnExplicitSyncWithNothingRecordedToWaitForStaysASync) {
  // The work it waits for may predate the recording (data_quality.h says so): not driver work.
  DetectorStep s;
  s.Call("cudaLaunchKernel", 0, 5 * us);
  s.Then(testing::kTcGemm, 300 * us);
  s.Idle(500 * us);
  s.Call("cudaStreamSynchronize", 350 * us, 750 * us);
  s.Call("cudaLaunchKernel", 795 * us, 800 * us);
  s.Then(testing::kTcGemm, 200 * us);
  s.Run(&DetectInputStall);
  const auto& b = s.report().breakdown();
  EXPECT_EQ(b.idle_cuda_call_ns(), 0);
  // The call; no drain after it: no GPU work was under it, so the host was not ahead of the GPU
  // and what it does next would have left the GPU idle anyway.
  EXPECT_EQ(b.idle_sync_blocked_ns(), 400 * us);
}

// GPU work to 300 us, one cudaStreamSynchronize from `sync_from` to its end, 500 us of host work
// with the GPU idle, then GPU work to the end of the 1000 us step.
DetectorStep OneSyncThenHostWork(int64_t sync_from) {
  DetectorStep s;
  s.Call("cudaLaunchKernel", 0, 5 * us);
  s.Then(testing::kTcGemm, 300 * us);
  s.Call("cudaStreamSynchronize", sync_from, 300 * us);
  s.Idle(500 * us);
  s.Call("cudaLaunchKernel", 795 * us, 800 * us);
  s.Then(testing::kTcGemm, 200 * us);
  return s;
}

TEST(IdleAttribution, AfterOneLightSyncTheHostsWorkIsItsOwn) {
  // One .item() that waits 50 us (5 % of the step, under kMinBlockedShare) for the last of the
  // GPU's work: the host was barely ahead, and the 500 us of Python after it are host time.
  DetectorStep s = OneSyncThenHostWork(250 * us);
  EXPECT_TRUE(s.Run(&DetectHostBound).has_value());
  const auto& b = s.report().breakdown();
  EXPECT_EQ(b.idle_sync_blocked_ns(), 0);
  EXPECT_EQ(b.idle_host_other_ns(), 495 * us);
  EXPECT_EQ(s.report().primary_bottleneck(), v1::host_bound);
  // Heavier (blocked from 150 us: 15 % of the step), the sync's drain is as long as the GPU work
  // it waited for (150 us): the host would have been that far ahead. The rest is host work.
  DetectorStep heavy = OneSyncThenHostWork(150 * us);
  heavy.Run(&DetectSyncStall);
  EXPECT_EQ(heavy.report().breakdown().idle_sync_blocked_ns(), 150 * us);
  EXPECT_EQ(heavy.report().breakdown().idle_host_other_ns(), 345 * us);
  EXPECT_EQ(heavy.report().primary_bottleneck(), v1::host_bound);
}

// `.item()` in the middle of the step waits for 8 ms of forward GPU work, then 30 ms of CPU-side
// metrics, then backward. Removing the .item() saves what the forward hid (the host would only
// have been that far ahead); moving the metrics out saves the rest: host_bound is the primary,
// the sync a smaller finding.
TEST(IdleAttribution, HostWorkAfterASyncLongerThanTheWorkItWaitedForIsHostWork) {
  constexpr int64_t ms = 1'000 * us;
  DetectorStep s;
  s.Call("cudaLaunchKernel", 0, 5 * us);
  s.Then(testing::kTcGemm, 8 * ms);                 // forward, 0-8 ms
  s.Call("cudaStreamSynchronize", 10 * us, 8 * ms);  // .item(): waits for all of it
  s.Idle(30 * ms);                                   // metrics on the CPU, 8-38 ms
  s.Call("cudaLaunchKernel", 38 * ms - 5 * us, 38 * ms);
  s.Then(testing::kTcGemm, 16 * ms);                 // backward
  s.Run(&DetectSyncStall);
  const auto& b = s.report().breakdown();
  // The drain: as long as the GPU work under the call (from 10 us to 8 ms); the rest of the
  // metrics (less the final launch) is host work.
  EXPECT_EQ(b.idle_sync_blocked_ns(), 8 * ms - 10 * us);
  EXPECT_EQ(b.idle_host_other_ns(), 22 * ms + 10 * us - 5 * us);
  EXPECT_EQ(s.report().primary_bottleneck(), v1::host_bound);
  bool sync_finding = false;
  for (const v1::Finding& f : s.report().findings()) sync_finding |= f.detector() == v1::sync_stall;
  EXPECT_TRUE(sync_finding);
}

TEST(IdleAttribution, UnexplainedHostTimeBeforeTheFirstCudaCallIsInput) {
  DetectorStep s;
  s.Idle(300 * us);
  s.Call("cudaLaunchKernel", 300 * us, 305 * us);
  s.Then(testing::kTcGemm, 700 * us);
  s.Run(&DetectInputStall);
  EXPECT_EQ(s.report().breakdown().idle_input_ns(), 300 * us);
  EXPECT_EQ(s.report().breakdown().idle_host_other_ns(), 0);
}

TEST(IdleAttribution, AnOpRunningBeforeTheFirstCudaCallIsHostWorkNotInput) {
  DetectorStep s;
  s.Idle(300 * us);
  s.Range(kCpuOpDomain, "aten::empty", 50 * us, 300 * us);
  s.Call("cudaLaunchKernel", 300 * us, 305 * us);
  s.Then(testing::kTcGemm, 700 * us);
  s.Run(&DetectInputStall);
  EXPECT_EQ(s.report().breakdown().idle_input_ns(), 50 * us);  // [0,50): nothing recorded
  EXPECT_EQ(s.report().breakdown().idle_host_other_ns(), 250 * us);
}

TEST(IdleAttribution, ACallEndingExactlyAtTheStepStartIsThePreviousSteps) {
  DetectorStep s;
  s.Call("cudaStreamSynchronize", -100 * us, 0);  // the last step's final .item()
  s.Idle(300 * us);
  s.Call("cudaLaunchKernel", 300 * us, 305 * us);
  s.Then(testing::kTcGemm, 700 * us);
  s.Run(&DetectInputStall);
  EXPECT_EQ(s.report().breakdown().idle_input_ns(), 300 * us);
}

TEST(IdleAttribution, TheStepsOwnRangeExplainsNothing) {
  DetectorStep s;
  s.Range(kUserAnnotationDomain, "ProfilerStep#3", 0, 1'000 * us);  // encloses the window
  s.Idle(300 * us);
  s.Call("cudaLaunchKernel", 300 * us, 305 * us);
  s.Then(testing::kTcGemm, 700 * us);
  s.Run(&DetectInputStall);
  EXPECT_EQ(s.report().breakdown().idle_input_ns(), 300 * us);
}

TEST(IdleAttribution, InputRangesAreRecognisedByName) {
  EXPECT_TRUE(IsInputRange("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"));
  EXPECT_TRUE(IsInputRange("## data_load ##"));
  EXPECT_FALSE(IsInputRange("aten::copy_"));
  EXPECT_FALSE(IsInputRange("Optimizer.step#AdamW.step"));
  EXPECT_TRUE(IsInputRange("MyDATASET.__getitem__"));  // any case, letter by letter
  EXPECT_FALSE(IsInputRange("read_data_lo"));            // a fragment cut short at the end
}

// The filter remembers the last domain it looked up: ranges switching domains back and forth, the
// step's own span and one outside the window must each get IsActivityRange's answer.
TEST(IdleAttribution, TheActivityFilterAnswersAsIsActivityRangeAcrossDomains) {
  StringTable strings;
  const Interval w{0, 1'000 * us};
  auto range = [&](std::string_view domain, int64_t start, int64_t end) {
    return NvtxRangeEvent{start, end, strings.Intern(domain), strings.Intern("r"), 1};
  };
  const std::vector<NvtxRangeEvent> ranges = {
      range(kCpuOpDomain, 10 * us, 20 * us),           // counts
      range(kCaptureDomain, 30 * us, 40 * us),         // the recording's own span: never
      range(kCpuOpDomain, 50 * us, 60 * us),           // counts again after a switch
      range(kRangeProfilerDomain, 70 * us, 80 * us),   // never
      range(kRangeProfilerDomain, 90 * us, 95 * us),   // never, same domain twice in a row
      range(kUserAnnotationDomain, 0, 1'000 * us),     // encloses the window: never
      range(kUserAnnotationDomain, 2'000 * us, 2'100 * us),  // outside the window: never
      range(kUserAnnotationDomain, 100 * us, 200 * us),      // counts
  };
  ActivityRangeFilter filter(strings, w);
  size_t counted = 0;
  for (const NvtxRangeEvent& r : ranges) {
    const bool expected = IsActivityRange(r, strings, w);
    EXPECT_EQ(filter(r), expected) << strings.Get(r.domain) << " at " << r.start_ns;
    counted += expected;
  }
  EXPECT_EQ(counted, 3u);
}

}  // namespace
}  // namespace gpuspy::analysis
