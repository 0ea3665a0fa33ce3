// CaptureWindow: which traced events an attach window lets through. Steps are built like a
// training loop traces them: an NVTX "ProfilerStep#k" range on the CPU, launch API calls inside
// it, and the kernels they launch running on the GPU a little later (past the range's end for
// the last launch of each step).
#include "inject/core/capture_window.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gpuspy::inject {
namespace {

constexpr int64_t kStepNs = 1'000'000;  // 1 ms per step
constexpr int kLaunchesPerStep = 4;

class CaptureWindowTest : public ::testing::Test {
 protected:
  // Step k spans [k*kStepNs, (k+1)*kStepNs - 10). Correlation ids: step k's launches are
  // k*100 + 1 .. k*100 + kLaunchesPerStep.
  EventColumns Step(int k) {
    EventColumns e;
    const int64_t t0 = k * kStepNs;
    e.nvtx_ranges.push_back({t0, t0 + kStepNs - 10, 0, strings_.Intern("ProfilerStep#" + std::to_string(k)), 1, 0});
    for (int i = 0; i < kLaunchesPerStep; ++i) {
      const uint64_t corr = static_cast<uint64_t>(k) * 100 + i + 1;
      const int64_t at = t0 + 100 + i * 200'000;
      e.apis.push_back({at, at + 5'000, corr, ApiDomain::kRuntime, 211, strings_.Intern("cudaLaunchKernel"), 1, 0});
      // The GPU runs each kernel 300 us after its launch: the last one past the step's end.
      e.kernels.push_back({at + 300'000, at + 350'000, corr, strings_.Intern("gemm"), {}, {}, 0});
    }
    e.nvtx_marks.push_back({t0 + 500, 0, strings_.Intern("mark"), 1});
    return e;
  }

  // Feeds steps [first, last] one by one, with "now" just after each step's end.
  void FeedSteps(CaptureWindow& w, int first, int last, EventColumns* out) {
    for (int k = first; k <= last; ++k) w.Feed(Step(k), (k + 1) * kStepNs, out);
  }

  static std::vector<uint64_t> KernelCorrelations(const EventColumns& e) {
    std::vector<uint64_t> c;
    for (const KernelEvent& k : e.kernels) c.push_back(k.correlation_id);
    std::sort(c.begin(), c.end());
    return c;
  }

  StringTable strings_;
};

TEST_F(CaptureWindowTest, CapturesExactlyTheRequestedStepsFromTheNextBoundary) {
  CaptureWindow w(&strings_);
  // Armed in the middle of step 2: step 2 was only partly traced, so the window opens at step 3.
  ASSERT_TRUE(w.Arm({.capture_id = 7, .steps = 3, .step_pattern = R"(ProfilerStep#(\d+))",
                     .start_timeout_ns = 100 * kStepNs},
                    2 * kStepNs + 500)
                  .ok());
  EventColumns out;
  FeedSteps(w, 2, 8, &out);
  EXPECT_EQ(w.state(), WindowState::kDraining);
  EXPECT_TRUE(w.step_aligned());
  EXPECT_EQ(w.steps_captured(), 3u);
  EXPECT_EQ(w.window_start_ns(), 3 * kStepNs);
  EXPECT_EQ(w.window_end_ns(), 6 * kStepNs - 10);
  w.Finish();
  EXPECT_EQ(w.state(), WindowState::kDone);

  ASSERT_EQ(out.nvtx_ranges.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(strings_.Get(out.nvtx_ranges[i].message), "ProfilerStep#" + std::to_string(3 + i));
  }
  EXPECT_EQ(out.apis.size(), 3u * kLaunchesPerStep);
  EXPECT_EQ(out.nvtx_marks.size(), 3u);
  // Every kernel launched in steps 3-5 is in, including those running after step 5's range ended;
  // none from step 2 or 6.
  std::vector<uint64_t> want;
  for (int k = 3; k <= 5; ++k) {
    for (int i = 1; i <= kLaunchesPerStep; ++i) want.push_back(k * 100 + i);
  }
  EXPECT_EQ(KernelCorrelations(out), want);
  for (const ApiEvent& a : out.apis) {
    EXPECT_GE(a.start_ns, w.window_start_ns());
    EXPECT_LT(a.start_ns, w.window_end_ns());
  }
  EXPECT_EQ(w.events_sent(), out.size());
  EXPECT_GT(w.events_outside(), 0u);
}

TEST_F(CaptureWindowTest, HoldsTheCurrentStepUntilItsRangeIsComplete) {
  CaptureWindow w(&strings_);
  ASSERT_TRUE(w.Arm({.capture_id = 1, .steps = 10, .step_pattern = "ProfilerStep#",
                     .start_timeout_ns = 100 * kStepNs},
                    0)
                  .ok());
  EventColumns out;
  // Step 0's API calls arrive before its NVTX range record (CUPTI writes the range at its end).
  EventColumns step0 = Step(0);
  EventColumns range_only;
  range_only.nvtx_ranges.swap(step0.nvtx_ranges);
  w.Feed(std::move(step0), kStepNs / 2, &out);
  EXPECT_EQ(w.state(), WindowState::kArmed);
  EXPECT_TRUE(out.empty());
  EXPECT_GT(w.held(), 0u);
  w.Feed(std::move(range_only), kStepNs, &out);
  EXPECT_EQ(w.state(), WindowState::kCapturing);
  EXPECT_EQ(out.apis.size(), static_cast<size_t>(kLaunchesPerStep));
  EXPECT_EQ(out.nvtx_ranges.size(), 1u);
}

TEST_F(CaptureWindowTest, WithoutStepRangesStartsAfterTheTimeoutAndEndsByDuration) {
  CaptureWindow w(&strings_);
  ASSERT_TRUE(w.Arm({.capture_id = 2, .duration_ns = 3 * kStepNs, .step_pattern = "NoSuchStep",
                     .start_timeout_ns = kStepNs},
                    0)
                  .ok());
  EventColumns out;
  w.Feed(Step(0), kStepNs / 2, &out);
  EXPECT_EQ(w.state(), WindowState::kArmed);
  w.Feed(Step(1), 2 * kStepNs, &out);
  EXPECT_EQ(w.state(), WindowState::kCapturing);
  EXPECT_FALSE(w.step_aligned());
  EXPECT_EQ(w.window_start_ns(), 0);
  FeedSteps(w, 2, 4, &out);
  EXPECT_EQ(w.state(), WindowState::kDraining);
  EXPECT_EQ(w.window_end_ns(), 3 * kStepNs);
  w.Finish();
  // Steps 0-2 are inside [0, 3 ms); step 3 and 4 are not.
  for (const ApiEvent& a : out.apis) EXPECT_LT(a.start_ns, 3 * kStepNs);
  EXPECT_EQ(out.apis.size(), 3u * kLaunchesPerStep);
  EXPECT_EQ(out.kernels.size(), 3u * kLaunchesPerStep);
}

TEST_F(CaptureWindowTest, StopWhileArmedSendsNothing) {
  CaptureWindow w(&strings_);
  ASSERT_TRUE(w.Arm({.capture_id = 3, .steps = 5, .step_pattern = "ProfilerStep#",
                     .start_timeout_ns = 100 * kStepNs},
                    kStepNs / 2)
                  .ok());
  EventColumns out;
  w.Feed(Step(0), kStepNs, &out);  // step 0 began before arming: not a boundary
  EXPECT_EQ(w.state(), WindowState::kArmed);
  w.Stop(kStepNs);
  EXPECT_EQ(w.state(), WindowState::kStopped);
  EXPECT_FALSE(w.active());
  w.Feed(Step(1), 2 * kStepNs, &out);
  EXPECT_TRUE(out.empty());
}

TEST_F(CaptureWindowTest, StopWhileCapturingKeepsTheCompletedSteps) {
  CaptureWindow w(&strings_);
  ASSERT_TRUE(w.Arm({.capture_id = 4, .steps = 10, .step_pattern = "ProfilerStep#",
                     .start_timeout_ns = 100 * kStepNs},
                    0)
                  .ok());
  EventColumns out;
  FeedSteps(w, 0, 1, &out);
  w.Stop(2 * kStepNs);
  EXPECT_EQ(w.state(), WindowState::kDraining);
  EXPECT_EQ(w.steps_captured(), 2u);
  w.Feed(Step(2), 3 * kStepNs, &out);  // traced after the stop: outside
  w.Finish();
  EXPECT_EQ(w.state(), WindowState::kStopped);
  EXPECT_EQ(out.nvtx_ranges.size(), 2u);
  EXPECT_EQ(out.kernels.size(), 2u * kLaunchesPerStep);
}

TEST_F(CaptureWindowTest, StopInTheMiddleOfAStepEndsWithTheLastCompleteOne) {
  CaptureWindow w(&strings_);
  ASSERT_TRUE(w.Arm({.capture_id = 8, .steps = 10, .step_pattern = "ProfilerStep#",
                     .start_timeout_ns = 100 * kStepNs},
                    0)
                  .ok());
  EventColumns out;
  FeedSteps(w, 0, 1, &out);
  EventColumns half = Step(2);  // step 2 is running: its calls are traced, its range is not done
  EventColumns range;
  range.nvtx_ranges.swap(half.nvtx_ranges);
  w.Feed(std::move(half), 2 * kStepNs + kStepNs / 2, &out);
  w.Stop(2 * kStepNs + kStepNs / 2);
  EXPECT_EQ(w.window_end_ns(), 2 * kStepNs - 10);
  w.Feed(std::move(range), 3 * kStepNs, &out);
  w.Finish();
  EXPECT_EQ(w.steps_captured(), 2u);
  EXPECT_EQ(out.nvtx_ranges.size(), 2u);
  EXPECT_EQ(out.apis.size(), 2u * kLaunchesPerStep);
}

TEST_F(CaptureWindowTest, KernelsArrivingBeforeTheirLaunchRecordsWaitForThem) {
  CaptureWindow w(&strings_);
  ASSERT_TRUE(w.Arm({.capture_id = 5, .steps = 1, .step_pattern = "ProfilerStep#",
                     .start_timeout_ns = 100 * kStepNs},
                    0)
                  .ok());
  EventColumns step = Step(0);
  EventColumns kernels_first;
  kernels_first.kernels.swap(step.kernels);
  EventColumns out;
  w.Feed(std::move(kernels_first), kStepNs / 2, &out);
  EXPECT_TRUE(out.kernels.empty());
  w.Feed(std::move(step), kStepNs, &out);
  EXPECT_EQ(out.kernels.size(), static_cast<size_t>(kLaunchesPerStep));
}

TEST_F(CaptureWindowTest, BadStepPatternIsRefused) {
  CaptureWindow w(&strings_);
  absl::Status st = w.Arm({.capture_id = 6, .steps = 1, .step_pattern = "Step(("}, 0);
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_FALSE(w.active());
}

}  // namespace
}  // namespace gpuspy::inject
