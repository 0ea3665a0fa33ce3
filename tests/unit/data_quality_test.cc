// Steps whose recording cannot carry a verdict say "insufficient data: <why>" and lead with it.
#include "analysis/data_quality.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/detectors/detectors.h"
#include "analysis/step_series.h"
#include "analysis/step_source.h"
#include "tests/unit/detectors/detector_test_steps.h"

namespace gpuspy::analysis {
namespace {

using testing::DetectorStep;
using ::testing::HasSubstr;
constexpr int64_t us = 1'000;

DetectorStep Healthy() {
  DetectorStep s;
  s.Call("cudaLaunchKernel", 0, 5 * us);
  s.Then(testing::kTcGemm, 1'000 * us);
  return s;
}

TEST(DataQuality, AWholeRecordedStepIsSufficient) {
  DetectorStep s = Healthy();
  s.Range(kCaptureDomain, "PyTorch Profiler (0)", -10 * us, 2'000 * us);
  s.Run(&DetectGpuBound);
  EXPECT_FALSE(s.report().data_quality().insufficient());
  EXPECT_NE(s.report().primary_bottleneck(), v1::insufficient_data);
}

TEST(DataQuality, ARecordingThatStopsMidStepIsInsufficient) {
  DetectorStep s = Healthy();
  s.Range(kCaptureDomain, "PyTorch Profiler (0)", 0, 850 * us);  // covers 85 % < 90 %
  s.Run(&DetectGpuBound);
  EXPECT_TRUE(s.report().data_quality().insufficient());
  EXPECT_EQ(s.report().primary_bottleneck(), v1::insufficient_data);
  EXPECT_THAT(s.report().findings(0).title(), HasSubstr("the recording covers 0.8 ms"));

  DetectorStep near = Healthy();
  near.Range(kCaptureDomain, "PyTorch Profiler (0)", 0, 910 * us);  // 91 %: enough
  near.Run(&DetectGpuBound);
  EXPECT_FALSE(near.report().data_quality().insufficient());
}

TEST(DataQuality, RangeProfilerReplayIsInsufficient) {
  DetectorStep s = Healthy();
  s.Range(kRangeProfilerDomain, "cuda_profiler_range", 0, 900 * us);
  s.Run(&DetectGpuBound);
  EXPECT_THAT(s.report().data_quality().reasons(0), HasSubstr("range-profiler"));
}

TEST(DataQuality, NoGpuWorkIsInsufficient) {
  DetectorStep s;
  s.Range(kCpuOpDomain, "aten::to", 0, 900 * us);
  s.Idle(1'000 * us);
  s.Run(&DetectInputStall);
  EXPECT_EQ(s.report().primary_bottleneck(), v1::insufficient_data);
  EXPECT_THAT(s.report().data_quality().reasons(0), HasSubstr("no GPU work and no CUDA calls"));
}

TEST(DataQuality, AGraphLaunchWithoutItsKernelsIsInsufficientUnlessAtTheStepEnd) {
  DetectorStep s = Healthy();
  s.Call("cudaGraphLaunch", 100 * us, 110 * us);  // its kernels never show up
  s.Run(&DetectGpuBound);
  EXPECT_THAT(s.report().data_quality().reasons(0), HasSubstr("graph node records missing"));

  DetectorStep tail = Healthy();
  tail.Call("cudaGraphLaunch", 900 * us, 910 * us);  // kernels may run in the next step
  tail.Run(&DetectGpuBound);
  EXPECT_FALSE(tail.report().data_quality().insufficient());
}

TEST(DataQuality, TheFirstWindowOfAnUnmarkedRecordingWithWorkLaunchedBeforeItIsInsufficient) {
  v1::StepReport first;
  first.mutable_step()->set_source("period");
  first.mutable_breakdown()->set_wall_ns(1'000 * us);
  first.mutable_data_quality()->set_unlaunched_gpu_ns(60 * us);  // 6 % >= 5 %
  MarkFirstWindow(&first);
  EXPECT_TRUE(first.data_quality().insufficient());
  EXPECT_EQ(first.findings(0).detector(), v1::insufficient_data);

  v1::StepReport near = first;
  near.clear_data_quality();
  near.clear_findings();
  near.mutable_data_quality()->set_unlaunched_gpu_ns(40 * us);  // 4 %
  MarkFirstWindow(&near);
  EXPECT_FALSE(near.data_quality().insufficient());

  v1::StepReport marked = first;
  marked.clear_data_quality();
  marked.clear_findings();
  marked.mutable_step()->set_source("nvtx:ProfilerStep#(\\d+)");
  marked.mutable_data_quality()->set_unlaunched_gpu_ns(600 * us);
  MarkFirstWindow(&marked);
  EXPECT_FALSE(marked.data_quality().insufficient());
}

v1::StepReport LastStep(const std::string& source, uint64_t kernels) {
  v1::StepReport last;
  last.mutable_step()->set_source(source);
  last.mutable_breakdown()->set_wall_ns(25'650'000);
  last.mutable_breakdown()->set_kernel_count(kernels);
  return last;
}

TEST(DataQuality, TheLastPeriodStepOfARunThatStoppedMidIterationIsInsufficient) {
  // Issue 35: a replay without NVTX ended with 52 kernels of a 346-kernel period, counted as a
  // steady step.
  v1::StepReport partial = LastStep("period:346 kernels", 52);
  MarkLastPeriodStep(&partial);
  ASSERT_TRUE(partial.data_quality().insufficient());
  EXPECT_EQ(partial.data_quality().reasons(0),
            "last window of the recording: 52 of the period's 346 kernels (the run ended "
            "mid-iteration)");
  EXPECT_EQ(partial.findings(0).detector(), v1::insufficient_data);

  // Near miss: 260 of 346 is 75.1 %, most of a period (the detector's own 3/4).
  v1::StepReport most = LastStep("period:346 kernels", 260);
  MarkLastPeriodStep(&most);
  EXPECT_FALSE(most.data_quality().insufficient());
  v1::StepReport short_of = LastStep("period:346 kernels", 259);
  MarkLastPeriodStep(&short_of);
  EXPECT_TRUE(short_of.data_quality().insufficient());

  // A marker-delimited step ends where the program said: never judged by a period.
  v1::StepReport nvtx = LastStep("nvtx:ProfilerStep#(\\d+)", 3);
  MarkLastPeriodStep(&nvtx);
  EXPECT_FALSE(nvtx.data_quality().insufficient());
}

TEST(DataQuality, PeriodKernelsReadsThePeriodStepsSource) {
  EXPECT_EQ(PeriodKernels("period:346 kernels"), 346u);
  EXPECT_EQ(PeriodKernels("nvtx:ProfilerStep"), 0u);
  EXPECT_EQ(PeriodKernels("window:1000ms"), 0u);
}

TEST(DataQuality, UnlaunchedWorkNeedsAProducerThatRecordsLaunches) {
  EventColumns ev;
  StringTable strings;
  ev.kernels.push_back({0, 100, 7, strings.Intern("k"), StreamKey{0, 1, 7}, {}, 0});
  EXPECT_EQ(UnlaunchedGpuNs(ev, {0, 1'000}), 0);  // no launch recorded at all: proves nothing
  ev.kernels.push_back({200, 300, 8, strings.Intern("k"), StreamKey{0, 1, 7}, {}, 0});
  ev.apis.push_back({150, 160, 8, ApiDomain::kRuntime, 0, strings.Intern("cudaLaunchKernel"), 1, 0});
  EXPECT_EQ(UnlaunchedGpuNs(ev, {0, 1'000}), 100);
}

// An excerpt cut from a longer trace (the shape of HTA's trace-compare examples): a 100 ms step
// range holding a few GPU records and one CUDA call that launched none of them. Nothing says what
// the host did, so no verdict (it was called host_bound).
TEST(DataQuality, AStepWhoseGpuRecordsLostTheirLaunchCallsIsAnExcerpt) {
  DetectorStep s;
  s.Call("cudaEventQuery", 0, 10 * us);
  s.Then(testing::kAdd, 5 * us).IssuedBy("cudaLaunchKernel", 0, 4 * us, "");  // one kept call
  for (int i = 0; i < 6; ++i) s.Idle(10'000 * us).Then(testing::kAdd, 5 * us);  // no launch recorded
  s.Idle(40'000 * us);
  s.Run(&DetectHostBound);
  EXPECT_EQ(s.report().primary_bottleneck(), v1::insufficient_data);
  ASSERT_GT(s.report().data_quality().reasons_size(), 0);
  EXPECT_THAT(s.report().data_quality().reasons(0),
              HasSubstr("6 of the step's 7 GPU operations have no launch call in the recording, "
                        "against 1 launches of its own"));
}

// Near miss: a producer whose calls never name their GPU work (no correlation matches at all)
// proves nothing about missing calls.
TEST(DataQuality, GpuRecordsThatNoCallEverNamesProveNothing) {
  DetectorStep s;
  s.Call("cudaLaunchKernel", 0, 10 * us);
  for (int i = 0; i < 6; ++i) s.Idle(1'000 * us).Then(testing::kTcGemm, 5'000 * us);
  s.Run(&DetectGpuBound);
  EXPECT_FALSE(s.report().data_quality().insufficient());
}

// Near misses: a loop whose host runs a step ahead (each kernel launched by the step before: as
// many of the step's own launches as records without theirs), and two records without a launch.
TEST(DataQuality, AStepAheadLoopAndAFewUnlaunchedRecordsAreNoExcerpt) {
  DetectorStep ahead;
  for (int i = 0; i < 6; ++i) {
    ahead.Then(testing::kTcGemm, 1'000 * us);                                     // launched before
    ahead.Call("cudaLaunchKernel", i * 1'000 * us + 10 * us, i * 1'000 * us + 15 * us);
    ahead.Then(testing::kAdd, 5 * us).IssuedBy("cudaLaunchKernel", i * 1'000 * us + 20 * us,
                                                i * 1'000 * us + 25 * us, "");  // its own
  }
  ahead.Run(&DetectGpuBound);
  EXPECT_FALSE(ahead.report().data_quality().insufficient())
      << ahead.report().data_quality().reasons(0);

  DetectorStep two;
  two.Then(testing::kAdd, 5 * us).Then(testing::kAdd, 5 * us);  // kMinMissingLaunchOps is 3
  two.Call("cudaEventQuery", 20 * us, 25 * us);
  two.Idle(1'000 * us);
  two.Run(&DetectHostBound);
  EXPECT_FALSE(two.report().data_quality().insufficient());
}

}  // namespace
}  // namespace gpuspy::analysis
