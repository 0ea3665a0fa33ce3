// host_bound: the GPU waits for host work that is neither CUDA calls nor the input pipeline;
// the finding says how long, between which calls, and what the host ran (from host ranges).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "analysis/detectors/detectors.h"
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

// A with_stack=True trace: the gap ran the user's metrics function (its frame inside the training
// step's), which called into numpy and an ATen op. The host work's own line is named, in the
// title and the hint, not the library's frames nor only where the host came back.
TEST(HostBound, TheUsersPythonLineThatRanInTheGapIsNamed) {
  DetectorStep s = MidStepGap(400);
  s.Range(kPythonFunctionDomain, "train.py(80): train_step", 0, 1'000 * us);
  s.Range(kPythonFunctionDomain, "metrics.py(12): compute_metrics", 305 * us, 690 * us);
  s.Range(kPythonFunctionDomain, "/usr/lib/python3/dist-packages/numpy/core/fromnumeric.py(59): mean",
          320 * us, 600 * us);
  s.Range(kCpuOpDomain, "aten::mean", 610 * us, 680 * us);
  const auto f = s.Run(&DetectHostBound);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->title(), HasSubstr("at metrics.py:12 compute_metrics"));
  EXPECT_EQ(Evidence(*f, "host_line"), "metrics.py:12 compute_metrics = 385.0 us of the gaps");
  std::string linked;  // the viewer links the evidence to the line
  for (const auto& e : f->evidence()) {
    if (e.key() == "host_line" && linked.empty()) linked = e.call_site();
  }
  EXPECT_EQ(linked, "metrics.py:12 compute_metrics");
  EXPECT_THAT(f->fix_hint(), HasSubstr("of these gaps in metrics.py:12 compute_metrics"));
}

// Near miss: only a library's frame ran in the gap: what the host ran is named (numpy's mean, the
// host activity), but no user line is made of it.
TEST(HostBound, LibraryFramesAreNoUserLine) {
  DetectorStep s = MidStepGap(400);
  s.Range(kPythonFunctionDomain, "/opt/venv/lib/python3.11/site-packages/numpy/core/fromnumeric.py(59): mean",
          320 * us, 600 * us);
  const auto f = s.Run(&DetectHostBound);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(Evidence(*f, "host_line"), "");
  EXPECT_THAT(f->title(), HasSubstr("mostly in /opt/venv/lib/python3.11/site-packages/numpy"));
  EXPECT_THAT(f->title(), ::testing::Not(HasSubstr(" at ")));
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

TEST(HostBound, TheSampledLinesInsideTheGapsAreNamedWithTheirShareOfIt) {
  DetectorStep s = MidStepGap(400);  // waited: [300, 695) us
  // 8 samples in the gap: 6 at the metrics line, 2 at the logging line; one outside the gap
  // (while the GPU ran) and one at the gap's own end (inside the launch call) do not count.
  for (int i = 0; i < 6; ++i) s.Sample((310 + 50 * i) * us, "train.py:61 compute_metrics \u2190 train.py:80 train");
  s.Sample(320 * us, "train.py:70 log");
  s.Sample(600 * us, "train.py:70 log");
  s.Sample(100 * us, "train.py:40 forward");
  s.Sample(697 * us, "train.py:44 forward");
  const auto f = s.Run(&DetectHostBound);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->title(), HasSubstr("mostly at train.py:61 compute_metrics"));
  // 6 of 8 samples of the 395 us waited: ~296 us.
  EXPECT_EQ(Evidence(*f, "hot_line"),
            "train.py:61 compute_metrics \u2190 train.py:80 train: 6 of 8 samples, ~296.2 us of the gaps");
  int hot_lines = 0;
  for (const auto& e : f->evidence()) {
    if (e.key() != "hot_line") continue;
    ++hot_lines;
    EXPECT_FALSE(e.call_site().empty());  // the viewer links each line
  }
  EXPECT_EQ(hot_lines, 2);
  EXPECT_THAT(f->fix_hint(), HasSubstr("spends ~75% of these gaps at train.py:61 compute_metrics"));
  EXPECT_THAT(Evidence(*f, "host_activity"), ::testing::IsEmpty());  // samples say what ran
}

TEST(HostBound, TooFewOrTooSpreadSamplesNameNoLineInTheTitle) {
  DetectorStep few = MidStepGap(400);
  few.Sample(400 * us, "train.py:61 compute_metrics");  // kMinHotLineSamples = 3
  few.Sample(500 * us, "train.py:61 compute_metrics");
  auto f = few.Run(&DetectHostBound);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->title(), ::testing::Not(HasSubstr("mostly at")));
  EXPECT_THAT(Evidence(few.Run(&DetectHostBound).value(), "hot_line"), HasSubstr("2 of 2 samples"));

  DetectorStep spread = MidStepGap(400);  // 3 of 13 (23%) is under kMinHotLineShare = 25%
  for (int i = 0; i < 13; ++i) {
    spread.Sample((310 + 25 * i) * us, i < 3 ? "a.py:1 f" : absl::StrCat("b.py:", i, " g"));
  }
  f = spread.Run(&DetectHostBound);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->title(), ::testing::Not(HasSubstr("mostly at")));
  DetectorStep four = MidStepGap(400);  // 4 of 13 (31%) names it
  for (int i = 0; i < 13; ++i) {
    four.Sample((310 + 25 * i) * us, i < 4 ? "a.py:1 f" : absl::StrCat("b.py:", i, " g"));
  }
  f = four.Run(&DetectHostBound);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->title(), HasSubstr("mostly at a.py:1 f"));
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
  s.Then(testing::kTcGemm, 500 * us);
  s.Call("cudaStreamSynchronize", 100 * us, 500 * us);
  // The host works after the sync returned, less than the 400 µs of GPU work the sync waited for:
  // without the wait it would have run meanwhile, so the emptied queue exposes it.
  s.Idle(400 * us);
  s.Call("cudaLaunchKernel", 895 * us, 900 * us);
  s.Then(testing::kTcGemm, 100 * us);
  EXPECT_FALSE(s.Run(&DetectHostBound).has_value());
  // The breakdown says the same: the drain is sync time, and sync_stall loses exactly that.
  EXPECT_EQ(s.report().breakdown().idle_host_other_ns(), 0);
  EXPECT_EQ(s.report().breakdown().idle_sync_blocked_ns(), 395 * us);
  const auto sync = s.Run(&DetectSyncStall);
  ASSERT_TRUE(sync.has_value());
  EXPECT_EQ(sync->lost_ns(), s.report().breakdown().idle_sync_blocked_ns());
}

// Overlapped MoE training: the host spins for tens of ms with no CUDA call (polling a flag) while
// the GPU stays busy. The GPU is not idle, so nothing is a stall.
TEST(HostBound, AHostSpinningWhileTheGpuWorksIsNoStall) {
  constexpr int64_t ms = 1'000 * us;
  DetectorStep s;
  s.Call("cudaLaunchKernel", 0, 5 * us);
  s.Then(testing::kTcGemm, 40 * ms);  // the host launched it and spins until 39 ms
  s.Call("cudaLaunchKernel", 39 * ms, 39 * ms + 5 * us);
  s.Then(testing::kTcGemm, 10 * ms);
  EXPECT_FALSE(s.Run(&DetectHostBound).has_value());
  for (const v1::Finding& f : s.report().findings()) {
    EXPECT_TRUE(f.detector() == v1::gpu_bound) << f.detector();
  }
  EXPECT_EQ(s.report().breakdown().gpu_idle_ns(), 0);
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
