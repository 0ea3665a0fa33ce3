// Time windows are not steps (analysis/step_source.h): the predicate, the rule that a
// window is never steady while a period-detected step may be, findings on a window saying so,
// and the job summary of a job with windows only.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/job_summary.h"
#include "analysis/period_detector.h"
#include "analysis/step_report.h"
#include "analysis/step_series.h"
#include "analysis/step_source.h"

namespace gpuspy::analysis {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(TimeWindows, OnlyWindowSourcesAreWindows) {
  EXPECT_TRUE(IsTimeWindow(WindowSource(kDefaultWindowNs)));
  EXPECT_EQ(WindowSource(kDefaultWindowNs), "window:1000ms");
  EXPECT_TRUE(IsTimeWindow("window:100ms"));
  // Near misses: a period-detected step, an NVTX step, an NVTX range that merely says "window".
  EXPECT_FALSE(IsTimeWindow("period:120 kernels"));
  EXPECT_FALSE(IsTimeWindow("nvtx:ProfilerStep#(\\d+)"));
  EXPECT_FALSE(IsTimeWindow("nvtx:window:(\\d+)"));
  EXPECT_FALSE(IsTimeWindow(""));
  EXPECT_EQ(StepNoun("window:1000ms"), "window");
  EXPECT_EQ(StepNoun("period:3 kernels"), "step");
}

TEST(TimeWindows, ExplanationNamesTheLengthAndWhy) {
  EXPECT_EQ(WindowExplanation("window:100ms"),
            "a 100 ms time window, not a step: no NVTX range matched the step pattern and no "
            "repeating kernel sequence was found");
}

// A step of 10 ms with one 9 ms kernel: GPU-bound, a finding either way.
v1::StepReport BusyStep(const std::string& source, int64_t number) {
  StringTable strings;
  EventColumns ev;
  const int64_t t0 = number * 10 * kMs;
  ev.kernels.push_back({t0 + kMs, t0 + 10 * kMs, 7, strings.Intern("ampere_bf16_gemm"), {0, 1, 7}, {}, 0});
  ev.apis.push_back({t0, t0 + kMs / 100, 7, ApiDomain::kRuntime, 1, strings.Intern("cudaLaunchKernel"), 1, 0});
  return BuildStepReport(ev, strings, StepWindow{number, t0, t0 + 10 * kMs, source}, 1);
}

TEST(TimeWindows, AWindowIsNeverSteadyAPeriodStepIs) {
  EXPECT_FALSE(BusyStep(WindowSource(10 * kMs), 0).steady_state());
  EXPECT_TRUE(BusyStep("period:1 kernels", 0).steady_state());
}

TEST(TimeWindows, FindingsOnAWindowSaySoOnceFirstInTheirEvidence) {
  v1::StepReport window = BusyStep(WindowSource(10 * kMs), 0);
  ASSERT_GT(window.findings_size(), 0);
  for (const v1::Finding& f : window.findings()) {
    ASSERT_GT(f.evidence_size(), 0);
    EXPECT_EQ(f.evidence(0).key(), kWindowEvidenceKey);
    EXPECT_THAT(f.evidence(0).value(), ::testing::HasSubstr("10 ms time window, not a step"));
  }
  const v1::StepReport once = window;
  MarkWindowFindings(&window);  // again: nothing added
  EXPECT_EQ(window.SerializeAsString(), once.SerializeAsString());

  const v1::StepReport step = BusyStep("period:1 kernels", 0);
  ASSERT_GT(step.findings_size(), 0);
  for (const v1::Finding& f : step.findings()) {
    for (const v1::Evidence& e : f.evidence()) EXPECT_NE(e.key(), kWindowEvidenceKey);
  }
}

std::vector<StepAnalysis> Series(const std::string& source) {
  std::vector<StepAnalysis> out;
  for (int64_t i = 0; i < 6; ++i) {
    StepAnalysis a;
    a.report = BusyStep(source, i);
    // The first is three times as long: a warm-up step, were these steps.
    if (i == 0) a.report.mutable_breakdown()->set_wall_ns(30 * kMs);
    out.push_back(std::move(a));
  }
  return out;
}

TEST(TimeWindows, SeriesOfWindowsHasNoWarmupAndNoSteadyWindow) {
  std::vector<StepAnalysis> windows = Series(WindowSource(10 * kMs));
  AnalyzeStepSeries(&windows);
  for (const StepAnalysis& w : windows) {
    EXPECT_FALSE(w.report.steady_state());
    for (const v1::Finding& f : w.report.findings()) {
      EXPECT_NE(f.detector(), v1::warmup);
      EXPECT_NE(f.detector(), v1::outlier_step);
    }
  }
  // Near miss: the same series found by period detection has its warm-up and steady steps.
  std::vector<StepAnalysis> steps = Series("period:1 kernels");
  AnalyzeStepSeries(&steps);
  EXPECT_FALSE(steps[0].report.steady_state());
  EXPECT_EQ(steps[0].report.primary_bottleneck(), v1::warmup);
  EXPECT_TRUE(steps[3].report.steady_state());
}

TEST(TimeWindows, SummaryOfWindowsOnlyIsPerWindowWithoutAStepTime) {
  std::vector<v1::StepReport> reports;
  for (int64_t i = 0; i < 4; ++i) reports.push_back(BusyStep(WindowSource(10 * kMs), i));
  const v1::JobSummary s = SummarizeJob("j", reports, 1, 8);
  EXPECT_TRUE(s.figures_per_window());
  EXPECT_EQ(s.window_count(), 4u);
  EXPECT_EQ(s.steady_step_count(), 0u);
  EXPECT_EQ(s.median_step_wall_ns(), 0);
  EXPECT_GT(s.median_gpu_busy_fraction(), 0.5);  // the figures are still there, per window
  ASSERT_GT(s.bottlenecks_size(), 0);
  EXPECT_EQ(s.bottlenecks(0).steps(), 4u);
}

TEST(TimeWindows, SummaryTakesItsStepTimeFromStepsNotFromAnotherProcessesWindows) {
  std::vector<v1::StepReport> reports;
  for (int64_t i = 0; i < 3; ++i) reports.push_back(BusyStep("period:1 kernels", i));
  for (int64_t i = 0; i < 5; ++i) {
    v1::StepReport w = BusyStep(WindowSource(10 * kMs), i);
    w.mutable_breakdown()->set_wall_ns(1000 * kMs);
    w.mutable_step()->set_process_id(2);
    reports.push_back(std::move(w));
  }
  const v1::JobSummary s = SummarizeJob("j", reports, 2, 8);
  EXPECT_FALSE(s.figures_per_window());
  EXPECT_EQ(s.window_count(), 5u);
  EXPECT_EQ(s.steady_step_count(), 3u);
  EXPECT_EQ(s.median_step_wall_ns(), 10 * kMs);
}

}  // namespace
}  // namespace gpuspy::analysis
