// Steps whose recording cannot carry a verdict say "insufficient data: <why>" and lead with it.
#include "analysis/data_quality.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/detectors/detectors.h"
#include "analysis/step_series.h"
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

TEST(DataQuality, UnlaunchedWorkNeedsAProducerThatRecordsLaunches) {
  EventColumns ev;
  StringTable strings;
  ev.kernels.push_back({0, 100, 7, strings.Intern("k"), StreamKey{0, 1, 7}, {}, 0});
  EXPECT_EQ(UnlaunchedGpuNs(ev, {0, 1'000}), 0);  // no launch recorded at all: proves nothing
  ev.kernels.push_back({200, 300, 8, strings.Intern("k"), StreamKey{0, 1, 7}, {}, 0});
  ev.apis.push_back({150, 160, 8, ApiDomain::kRuntime, 0, strings.Intern("cudaLaunchKernel"), 1, 0});
  EXPECT_EQ(UnlaunchedGpuNs(ev, {0, 1'000}), 100);
}

}  // namespace
}  // namespace gpuspy::analysis
