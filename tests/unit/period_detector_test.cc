// Steps without NVTX: the training loop's period is found from the kernel sequence.
#include "analysis/period_detector.h"

#include <gtest/gtest.h>

#include <limits>

#include "analysis/step_report.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy::analysis {
namespace {

synthetic::SyntheticRank Rank(synthetic::Scenario s, int steps, bool nvtx) {
  synthetic::SyntheticOptions o;
  o.scenario = s;
  o.steps = steps;
  o.nvtx_steps = nvtx;
  return synthetic::GenerateRank(o, 0);
}

EventColumns All(const synthetic::SyntheticRank& r) {
  EventColumns all;
  for (const auto& s : r.steps) all.Append(s);
  return all;
}

TEST(PeriodDetector, FindsOneStepPerIterationWithoutNvtx) {
  for (auto scenario : {synthetic::Scenario::kHealthy, synthetic::Scenario::kSyncStall,
                        synthetic::Scenario::kLaunchStorm}) {
    const auto rank = Rank(scenario, 10, /*nvtx=*/false);
    const EventColumns all = All(rank);
    ASSERT_TRUE(all.nvtx_ranges.empty());
    const auto steps = DetectPeriodicSteps(all, rank.strings);
    // Without NVTX the phase of an iteration is a guess (where the host pauses longest), and the
    // two warm-up iterations may split differently; the period itself must be right.
    ASSERT_GE(steps.size(), 9u) << synthetic::ScenarioName(scenario);
    ASSERT_LE(steps.size(), 11u) << synthetic::ScenarioName(scenario);
    EXPECT_EQ(steps[0].source.rfind("period:", 0), 0u);
    const auto truth = Rank(scenario, 10, /*nvtx=*/true);
    const auto true_steps = StepSegmenter().FindSteps(All(truth), truth.strings);
    ASSERT_EQ(true_steps.size(), 10u);
    const int64_t true_steady = true_steps[5].end_ns - true_steps[5].start_ns;
    for (size_t i = steps.size() - 5; i + 1 < steps.size(); ++i) {
      const double ratio = static_cast<double>(steps[i].end_ns - steps[i].start_ns) / true_steady;
      EXPECT_NEAR(ratio, 1.0, 0.15) << synthetic::ScenarioName(scenario) << " step " << i;
    }
    // Steps tile the run without overlapping.
    for (size_t i = 1; i < steps.size(); ++i) EXPECT_EQ(steps[i].start_ns, steps[i - 1].end_ns);
  }
}

TEST(PeriodDetector, VerdictsHoldOnDetectedSteps) {
  const auto rank = Rank(synthetic::Scenario::kLaunchStorm, 8, /*nvtx=*/false);
  const EventColumns all = All(rank);
  const auto steps = DetectPeriodicSteps(all, rank.strings);
  ASSERT_GE(steps.size(), 7u);
  for (size_t i = 3; i + 1 < steps.size(); ++i) {
    EXPECT_EQ(BuildStepReport(all, rank.strings, steps[i], 1).primary_bottleneck(), v1::launch_storm);
  }
}

TEST(PeriodDetector, NoRepetitionNoPeriod) {
  StringTable strings;
  EventColumns ev;
  for (int i = 0; i < 200; ++i) {
    KernelEvent k;
    k.start_ns = i * 1000;
    k.end_ns = k.start_ns + 500;
    k.name = strings.Intern("kernel_" + std::to_string(i));  // every kernel different
    ev.kernels.push_back(k);
  }
  EXPECT_TRUE(DetectPeriodicSteps(ev, strings).empty());
  EXPECT_TRUE(DetectPeriodicSteps(EventColumns{}, strings).empty());
}

// `iterations` repetitions of `kernels` distinct kernels of `kernel_ns` each, back to back, with
// a host pause of `pause_ns` before each iteration (kernel starts stand in for launch times).
EventColumns Loop(StringTable& strings, int iterations, int kernels, int64_t kernel_ns,
                  int64_t pause_ns) {
  EventColumns ev;
  int64_t t = 0;
  for (int i = 0; i < iterations; ++i) {
    t += pause_ns;
    for (int k = 0; k < kernels; ++k) {
      KernelEvent e;
      e.start_ns = t;
      e.end_ns = t + kernel_ns;
      e.name = strings.Intern("kernel_" + std::to_string(k));
      ev.kernels.push_back(e);
      t += kernel_ns;
    }
  }
  return ev;
}

TEST(PeriodDetector, IdenticalMicrosecondKernelsAreNotOneStepEach) {
  StringTable strings;
  EXPECT_TRUE(DetectPeriodicSteps(Loop(strings, 10'000, 1, 1'000, 1'000), strings).empty());
}

TEST(PeriodDetector, APeriodOfAHandfulOfKernelsIsNotAStep) {
  StringTable strings;
  // Long enough (4 x 100 µs), but 4 kernels: fewer than kMinPeriodKernels.
  EXPECT_TRUE(DetectPeriodicSteps(Loop(strings, 50, 4, 100'000, 50'000), strings).empty());
}

TEST(PeriodDetector, APeriodShorterThanAPlausibleStepIsNotAStep) {
  StringTable strings;
  // Enough kernels, but 5 x 1 µs + 2 µs = 7 µs per period, far below kMinPeriodNs.
  EXPECT_TRUE(DetectPeriodicSteps(Loop(strings, 1'000, 5, 1'000, 2'000), strings).empty());
}

TEST(PeriodDetector, AShortButPlausiblePeriodIsStillFound) {
  StringTable strings;
  // The near miss: 5 kernels of 25 µs after a 50 µs pause, 175 µs per iteration. (The last
  // iterations, shorter than the pattern looked up, are one step.)
  const std::vector<StepWindow> steps =
      DetectPeriodicSteps(Loop(strings, 40, 5, 25'000, 50'000), strings);
  ASSERT_GE(steps.size(), 30u);
  EXPECT_EQ(steps[0].source, "period:5 kernels");
}

TEST(PeriodDetector, FixedWindowsCoverTheActivityAndAreLabelled) {
  EventColumns ev;
  ev.kernels.push_back({0, 100, 1, 0, {}, {}, 0});
  ev.kernels.push_back({1'200'000'000, 1'300'000'000, 3, 0, {}, {}, 0});
  ev.kernels.push_back({3'400'000'000, 3'500'000'000, 2, 0, {}, {}, 0});
  const auto w = FixedWindows(ev, 1'000'000'000);
  ASSERT_EQ(w.size(), 3u);  // the idle window [2 s, 3 s) is left out
  EXPECT_EQ(w[0].start_ns, 0);
  EXPECT_EQ(w[1].number, 1);
  EXPECT_EQ(w[2].number, 3);
  EXPECT_EQ(w[2].end_ns, 3'500'000'000);
  EXPECT_EQ(w[1].source, "window:1000ms");
}

TEST(PeriodDetector, FixedWindowsOverAHostileSpanAreOnlyTheActiveOnes) {
  // One kernel near each end of the int64 range: 2^64 ns of span, two active windows. Walking
  // every window of the span (as an earlier version did) never returned.
  EventColumns ev;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  ev.kernels.push_back({kMin, kMin + 100, 1, 0, {}, {}, 0});
  ev.kernels.push_back({kMax - 200, kMax - 100, 2, 0, {}, {}, 0});
  const auto w = FixedWindows(ev, 1'000'000'000);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].number, 0);
  EXPECT_EQ(w[0].start_ns, kMin);
  EXPECT_EQ(w[0].end_ns, kMin + 1'000'000'000);
  // The last window is cut at the process's last event; its number counts the windows before it.
  EXPECT_EQ(w[1].end_ns, kMax - 100);
  EXPECT_EQ(static_cast<uint64_t>(w[1].number),
            (static_cast<uint64_t>(kMax - 200) - static_cast<uint64_t>(kMin)) / 1'000'000'000);
  // (in unsigned arithmetic: the offset from kMin does not fit an int64)
  EXPECT_EQ(w[1].start_ns, static_cast<int64_t>(static_cast<uint64_t>(kMin) +
                                                static_cast<uint64_t>(w[1].number) * 1'000'000'000u));
}

bool SameSteps(const std::vector<StepWindow>& a, const std::vector<StepWindow>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].number != b[i].number || a[i].start_ns != b[i].start_ns ||
        a[i].end_ns != b[i].end_ns || a[i].source != b[i].source) {
      return false;
    }
  }
  return true;
}

TEST(PeriodDetector, BatchByBatchFindsWhatTheWholeRunFinds) {
  for (auto scenario : {synthetic::Scenario::kHealthy, synthetic::Scenario::kSyncStall,
                        synthetic::Scenario::kLaunchStorm}) {
    const auto rank = Rank(scenario, 12, /*nvtx=*/false);
    const EventColumns all = All(rank);
    // As stored: each step's kernels one batch after their launch calls (a kernel's record comes
    // when it completes), and the first step's kernels *before* its calls.
    StepDetectionInput in;
    for (size_t i = 0; i < rank.steps.size(); ++i) {
      EventColumns calls = rank.steps[i], kernels;
      std::swap(kernels.kernels, calls.kernels);
      if (i == 0) {
        in.Add(kernels);
        in.Add(calls);
      } else {
        in.Add(calls);
        in.Add(kernels);
      }
    }
    const auto whole = DetectPeriodicSteps(all, rank.strings);
    ASSERT_FALSE(whole.empty()) << synthetic::ScenarioName(scenario);
    EXPECT_TRUE(SameSteps(in.Periodic(), whole)) << synthetic::ScenarioName(scenario);
    EXPECT_TRUE(SameSteps(in.Fixed(kDefaultWindowNs), FixedWindows(all, kDefaultWindowNs)));
  }
}

TEST(PeriodDetector, EveryKernelOfOneLaunchCallTakesItsTime) {
  // A CUDA graph launch: one call, several kernels with its correlation id, some recorded before
  // the call and some after.
  StepDetectionInput in;
  EventColumns early, call, late;
  early.kernels.push_back({5000, 5100, 7, 1, {}, {}, 0});
  call.apis.push_back({});
  call.apis.back().start_ns = 1000;
  call.apis.back().end_ns = 1010;
  call.apis.back().correlation_id = 7;
  late.kernels.push_back({5200, 5300, 7, 2, {}, {}, 0});
  in.Add(early);
  in.Add(call);
  in.Add(late);
  ASSERT_EQ(in.launches().size(), 2u);
  EXPECT_EQ(in.launches()[0].host_ns, 1000);
  EXPECT_EQ(in.launches()[1].host_ns, 1000);
  const auto w = in.Fixed(1'000'000'000);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].start_ns, 1000);
  EXPECT_EQ(w[0].end_ns, 5300);
}

}  // namespace
}  // namespace gpuspy::analysis
