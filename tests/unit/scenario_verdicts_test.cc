// Ground truth for the detectors: every synthetic pathology must get its verdict on every
// steady step, warm-up steps must be called warm-up, and healthy steps must not be accused.
#include <gtest/gtest.h>

#include <set>

#include "collector/analysis/cross_rank_analysis.h"
#include "collector/analysis/step_report.h"
#include "collector/analysis/step_series.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy {
namespace {

using analysis::StepAnalysis;
using synthetic::Scenario;

// Analyzes one synthetic rank the way the collector does: per-step reports from the step's
// NVTX window, then the cross-step pass.
std::vector<StepAnalysis> Analyze(const synthetic::SyntheticRank& rank) {
  EventColumns all;
  for (const auto& s : rank.steps) all.Append(s);
  analysis::StepSegmenter segmenter;
  std::vector<analysis::StepWindow> windows = segmenter.FindSteps(all, rank.strings);
  std::vector<StepAnalysis> out;
  for (const auto& w : windows) {
    out.push_back(analysis::AnalyzeStep(all, rank.strings, w, 1));
  }
  analysis::AnalyzeStepSeries(&out);
  return out;
}

class ScenarioVerdicts : public ::testing::TestWithParam<Scenario> {};

TEST_P(ScenarioVerdicts, EveryStepGetsTheExpectedPrimaryBottleneck) {
  synthetic::SyntheticOptions o;
  o.scenario = GetParam();
  o.steps = 8;
  o.seed = 11;
  const synthetic::SyntheticRank rank = synthetic::GenerateRank(o, 0);
  const std::vector<StepAnalysis> steps = Analyze(rank);
  ASSERT_EQ(steps.size(), 8u);
  for (size_t i = 0; i < steps.size(); ++i) {
    const v1::StepReport& r = steps[i].report;
    EXPECT_EQ(r.step().number(), static_cast<int64_t>(i));
    EXPECT_EQ(r.primary_bottleneck(), rank.expected_primary[i])
        << synthetic::ScenarioName(o.scenario) << " step " << i << ": "
        << (r.findings().empty() ? std::string("no findings") : r.findings(0).title());
    EXPECT_EQ(r.steady_state(), i >= 2);
    if (r.primary_bottleneck() != "none" && !r.findings().empty()) {
      EXPECT_FALSE(r.findings(0).fix_hint().empty());
      EXPECT_FALSE(r.findings(0).evidence().empty());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllScenarios, ScenarioVerdicts,
                         ::testing::ValuesIn(synthetic::AllScenarios()),
                         [](const auto& info) { return synthetic::ScenarioName(info.param); });

TEST(ScenarioVerdicts, HealthyStepsAreNotAccusedOfAnything) {
  synthetic::SyntheticOptions o;
  o.scenario = Scenario::kHealthy;
  o.steps = 8;
  const auto steps = Analyze(synthetic::GenerateRank(o, 0));
  for (size_t i = 2; i < steps.size(); ++i) {
    for (const auto& f : steps[i].report.findings()) {
      EXPECT_EQ(f.detector(), "gpu_bound") << "step " << i << ": " << f.title();
    }
  }
}

TEST(ScenarioVerdicts, DifferentSeedsSameVerdicts) {
  for (uint64_t seed : {1, 2, 3}) {
    synthetic::SyntheticOptions o;
    o.scenario = Scenario::kLaunchStorm;
    o.steps = 6;
    o.seed = seed;
    const auto rank = synthetic::GenerateRank(o, 0);
    const auto steps = Analyze(rank);
    for (size_t i = 2; i < steps.size(); ++i) {
      EXPECT_EQ(steps[i].report.primary_bottleneck(), "launch_storm") << "seed " << seed;
    }
  }
}

TEST(ScenarioVerdicts, SlowRankIsTheStragglerAndOnlyIt) {
  // Two ranks included: there the upper median would be the slow rank itself.
  for (int world : {2, 3}) {
    synthetic::SyntheticOptions o;
    o.scenario = Scenario::kHealthy;
    o.steps = 8;
    o.ranks = world;
    o.slow_rank = 1;
    std::vector<std::vector<StepAnalysis>> ranks;
    for (int r = 0; r < world; ++r) ranks.push_back(Analyze(synthetic::GenerateRank(o, r)));
    std::vector<analysis::RankSeries> series;
    for (int r = 0; r < world; ++r) series.push_back({r, static_cast<uint32_t>(world), &ranks[r]});
    analysis::AnalyzeRanks(series);
    for (int r = 0; r < world; ++r) {
      for (size_t i = 2; i < ranks[r].size(); ++i) {
        const std::string primary = ranks[r][i].report.primary_bottleneck();
        if (r == 1) {
          EXPECT_EQ(primary, "straggler") << world << " ranks, step " << i;
        } else {
          EXPECT_NE(primary, "straggler") << world << " ranks, rank " << r << " step " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace gpuspy
