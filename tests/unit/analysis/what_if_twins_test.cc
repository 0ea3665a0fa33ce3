// The what-if replay against ground truth: every scenario with a fixed twin (the same seed with
// its cause removed, SyntheticOptions::fixed) is run both ways. What the finding predicts its fix
// saves must be within 15 % (or 1 ms) of what the twin measurably saves, the primary must be the
// fix that gains most, and the fixed twin must not carry the fixed cause as its primary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/detector_names.h"
#include "analysis/stats.h"
#include "analysis/step_report.h"
#include "analysis/step_segmenter.h"
#include "analysis/step_series.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy {

using analysis::DetectorName;

namespace {

using analysis::StepAnalysis;
using synthetic::Scenario;

constexpr double kMaxRelativeError = 0.15;
constexpr int64_t kMaxAbsoluteErrorNs = 1'000'000;

std::vector<StepAnalysis> Analyze(const synthetic::SyntheticRank& rank) {
  EventColumns all;
  for (const auto& s : rank.steps) all.Append(s);
  analysis::StepSegmenter segmenter;
  std::vector<StepAnalysis> out;
  for (const auto& w : segmenter.FindSteps(all, rank.strings)) {
    out.push_back(analysis::AnalyzeStep(all, rank.strings, w, 1));
  }
  analysis::AnalyzeStepSeries(&out);
  return out;
}

std::vector<const v1::StepReport*> Steady(const std::vector<StepAnalysis>& steps) {
  std::vector<const v1::StepReport*> out;
  for (const StepAnalysis& s : steps) {
    if (s.report.steady_state()) out.push_back(&s.report);
  }
  return out;
}

int64_t MedianWall(const std::vector<const v1::StepReport*>& steps) {
  std::vector<int64_t> walls;
  for (const v1::StepReport* r : steps) walls.push_back(r->breakdown().wall_ns());
  return stats::Median(walls);
}

const v1::Finding* FindingOf(const v1::StepReport& r, const std::string& detector) {
  for (const v1::Finding& f : r.findings()) {
    if (DetectorName(f.detector()) == detector) return &f;
  }
  return nullptr;
}

synthetic::SyntheticOptions Options(Scenario s, bool fixed) {
  synthetic::SyntheticOptions o;
  o.scenario = s;
  o.steps = 8;
  o.seed = 23;
  o.fixed = fixed;
  return o;
}

class WhatIfTwins : public ::testing::TestWithParam<Scenario> {};

TEST_P(WhatIfTwins, PredictedGainMatchesTheFixedTwin) {
  const Scenario scenario = GetParam();
  const std::string cause = synthetic::ExpectedPrimary(scenario);
  const std::vector<StepAnalysis> before = Analyze(synthetic::GenerateRank(Options(scenario, false), 0));
  const std::vector<StepAnalysis> after = Analyze(synthetic::GenerateRank(Options(scenario, true), 0));
  const auto steady_before = Steady(before), steady_after = Steady(after);
  ASSERT_FALSE(steady_before.empty());
  ASSERT_FALSE(steady_after.empty());
  const int64_t measured = MedianWall(steady_before) - MedianWall(steady_after);

  std::vector<int64_t> predicted;
  for (const v1::StepReport* r : steady_before) {
    ASSERT_TRUE(r->replay().available()) << r->replay().unavailable_reason();
    const v1::Finding* f = FindingOf(*r, cause);
    ASSERT_NE(f, nullptr) << cause << " missing in step " << r->step().number();
    EXPECT_TRUE(f->has_what_if()) << cause;
    predicted.push_back(f->lost_ns());
    // The primary is the fix that gains most.
    EXPECT_EQ(DetectorName(r->primary_bottleneck()), cause) << "step " << r->step().number();
    // All fixes together save at least the largest single fix.
    EXPECT_GE(r->replay().all_fixes_gain_ns(), r->findings(0).lost_ns());
  }
  const int64_t median_predicted = stats::Median(predicted);
  std::printf("%s: predicted %.2f ms, measured %.2f ms\n", synthetic::ScenarioName(scenario).c_str(),
              median_predicted / 1e6, measured / 1e6);
  const double tolerance =
      std::max<double>(kMaxAbsoluteErrorNs, kMaxRelativeError * static_cast<double>(measured));
  EXPECT_NEAR(static_cast<double>(median_predicted), static_cast<double>(measured), tolerance)
      << synthetic::ScenarioName(scenario) << ": predicted " << median_predicted / 1e6
      << " ms, measured " << measured / 1e6 << " ms";
  for (const v1::StepReport* r : steady_after) {
    EXPECT_NE(DetectorName(r->primary_bottleneck()), cause)
        << "the fixed twin still blames " << cause << " in step " << r->step().number();
  }
}

std::vector<Scenario> TwinScenarios() {
  std::vector<Scenario> out;
  for (Scenario s : synthetic::AllScenarios()) {
    if (synthetic::HasFixedTwin(s)) out.push_back(s);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(SingleProcess, WhatIfTwins, ::testing::ValuesIn(TwinScenarios()),
                         [](const auto& info) { return synthetic::ScenarioName(info.param); });

// Every steady step of every single-process scenario replays to its recorded wall time.
TEST(WhatIfReplay, UneditedReplayReproducesEveryScenarioStep) {
  for (Scenario s : synthetic::AllScenarios()) {
    for (const StepAnalysis& step : Analyze(synthetic::GenerateRank(Options(s, false), 0))) {
      const v1::StepReplay& r = step.report.replay();
      EXPECT_TRUE(r.available()) << synthetic::ScenarioName(s) << ": " << r.unavailable_reason();
      EXPECT_EQ(r.replayed_ns(), r.recorded_ns()) << synthetic::ScenarioName(s);
    }
  }
}

}  // namespace
}  // namespace gpuspy
