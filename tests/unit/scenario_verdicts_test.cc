// Ground truth for the detectors: every synthetic pathology must get its verdict on every
// steady step, warm-up steps must be called warm-up, and healthy steps must not be accused.
#include <gtest/gtest.h>

#include <algorithm>

#include <set>
#include <string>

#include "analysis/cross_rank_analysis.h"
#include "analysis/detector_names.h"
#include "analysis/evidence.h"
#include "analysis/step_report.h"
#include "analysis/step_series.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy {

using analysis::DetectorName;

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

// Every rank of a job analysed, then the cross-rank pass over them, as the collector does.
std::vector<std::vector<StepAnalysis>> AnalyzeJob(const std::vector<synthetic::SyntheticRank>& job) {
  std::vector<std::vector<StepAnalysis>> ranks;
  for (const synthetic::SyntheticRank& r : job) ranks.push_back(Analyze(r));
  std::vector<analysis::RankSeries> series;
  const auto world = static_cast<uint32_t>(job.size());
  for (uint32_t r = 0; r < world; ++r) {
    series.push_back({static_cast<int32_t>(r), world, &ranks[r]});
  }
  analysis::AnalyzeRanks(series);
  return ranks;
}

// Every measured fact of every finding has a documented unit, and its text shows its number as
// the one renderer writes it (what a script reads and what a person reads cannot disagree).
void ExpectEvidenceRenderedFromItsNumbers(const v1::StepReport& r) {
  static const std::set<std::string> kUnits = {"",      "ns",    "bytes",           "count",
                                               "fraction", "ratio", "bytes_per_second"};
  for (const v1::Finding& f : r.findings()) {
    for (const v1::Evidence& e : f.evidence()) {
      EXPECT_TRUE(kUnits.contains(e.unit())) << DetectorName(f.detector()) << "." << e.key() << ": " << e.unit();
      if (e.unit().empty()) continue;
      const std::string shown = analysis::Render({e.quantity(), e.unit().c_str()});
      EXPECT_NE(e.value().find(shown), std::string::npos)
          << DetectorName(f.detector()) << "." << e.key() << " = '" << e.value() << "' does not show " << shown;
    }
  }
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
    EXPECT_EQ(DetectorName(r.primary_bottleneck()), rank.expected_primary[i])
        << synthetic::ScenarioName(o.scenario) << " step " << i << ": "
        << (r.findings().empty() ? std::string("no findings") : r.findings(0).title());
    EXPECT_EQ(r.steady_state(), i >= 2);
    if (r.primary_bottleneck() != v1::none && !r.findings().empty()) {
      EXPECT_FALSE(r.findings(0).fix_hint().empty());
      EXPECT_FALSE(r.findings(0).evidence().empty());
    }
    ExpectEvidenceRenderedFromItsNumbers(r);
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
      EXPECT_EQ(f.detector(), v1::gpu_bound) << "step " << i << ": " << f.title();
    }
  }
}

// The fusion fixtures are GPU-bound steps whose GPU time is the problem: busy ~98 %, and the
// verdict names what the time is made of (gpu_bound is still there, outranked).
TEST(ScenarioVerdicts, UnfusedMlpIsBusyAndMostlyMemoryBound) {
  synthetic::SyntheticOptions o;
  o.scenario = Scenario::kUnfusedMlp;
  o.steps = 6;
  const auto steps = Analyze(synthetic::GenerateRank(o, 0));
  for (size_t i = 2; i < steps.size(); ++i) {
    const v1::StepReport& r = steps[i].report;
    EXPECT_GT(static_cast<double>(r.breakdown().gpu_busy_ns()) / r.breakdown().wall_ns(), 0.95);
    ASSERT_FALSE(r.kernel_classes().empty());
    EXPECT_EQ(r.kernel_classes(0).kernel_class(), "elementwise");
    EXPECT_GT(r.kernel_classes(0).share(), 0.5);
    std::set<std::string> detectors;
    for (const auto& f : r.findings()) detectors.insert(DetectorName(f.detector()));
    EXPECT_TRUE(detectors.count("gpu_bound")) << "step " << i;
    EXPECT_FALSE(detectors.count("unfused_attention")) << "step " << i;
  }
}

TEST(ScenarioVerdicts, EagerAttentionIsNotCalledUnfusedElementwise) {
  synthetic::SyntheticOptions o;
  o.scenario = Scenario::kEagerAttention;
  o.steps = 6;
  const auto steps = Analyze(synthetic::GenerateRank(o, 0));
  for (size_t i = 2; i < steps.size(); ++i) {
    for (const auto& f : steps[i].report.findings()) {
      EXPECT_NE(f.detector(), v1::unfused_elementwise) << "step " << i << ": " << f.title();
    }
  }
}

// The fixes applied (torch.compile's fused tail, SDPA's flash kernel): the same models are
// GPU-bound and no fusion finding is left, not even a secondary one.
TEST(ScenarioVerdicts, FusedControlsGetNoFusionFinding) {
  for (Scenario s : {Scenario::kCompiledMlp, Scenario::kSdpaAttention}) {
    synthetic::SyntheticOptions o;
    o.scenario = s;
    o.steps = 6;
    const std::vector<StepAnalysis> steps = Analyze(synthetic::GenerateRank(o, 0));
    for (size_t i = 2; i < steps.size(); ++i) {
      const v1::StepReport& r = steps[i].report;
      EXPECT_EQ(r.primary_bottleneck(), v1::gpu_bound) << synthetic::ScenarioName(s) << " step " << i;
      for (const v1::Finding& f : r.findings()) {
        EXPECT_NE(f.detector(), v1::unfused_elementwise) << synthetic::ScenarioName(s) << ": " << f.title();
        EXPECT_NE(f.detector(), v1::unfused_attention) << synthetic::ScenarioName(s) << ": " << f.title();
      }
      // The composition names the fused kernels' classes.
      const bool fused = std::any_of(r.kernel_classes().begin(), r.kernel_classes().end(),
                                     [](const v1::KernelClassTime& c) {
                                       return c.kernel_class() == "triton" || c.kernel_class() == "attention";
                                     });
      EXPECT_TRUE(fused) << synthetic::ScenarioName(s);
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
      EXPECT_EQ(steps[i].report.primary_bottleneck(), v1::launch_storm) << "seed " << seed;
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
    std::vector<std::vector<StepAnalysis>> ranks = AnalyzeJob(synthetic::GenerateJob(o));
    for (int r = 0; r < world; ++r) {
      for (size_t i = 2; i < ranks[r].size(); ++i) {
        const std::string primary = DetectorName(ranks[r][i].report.primary_bottleneck());
        if (r == 1) {
          EXPECT_EQ(primary, "straggler") << world << " ranks, step " << i;
        } else {
          EXPECT_NE(primary, "straggler") << world << " ranks, rank " << r << " step " << i;
        }
      }
    }
  }
}

// The README's demo (scripts/demo.sh: sync_stall, 2 ranks, rank 1 slow): rank 0's steps look
// busy (its NCCL kernel spans the wait), yet each steady one says it waited for rank 1 and why
// rank 1 is late; rank 1 has the straggler finding, and its primary is the finding that loses
// the most time (its own sync stall costs it more than the others wait for it).
TEST(ScenarioVerdicts, TheDemosFastRankSaysItWaitsForRankOneAndWhy) {
  synthetic::SyntheticOptions o;
  o.scenario = Scenario::kSyncStall;
  o.steps = 8;
  o.ranks = 2;
  o.slow_rank = 1;
  const std::vector<std::vector<StepAnalysis>> ranks = AnalyzeJob(synthetic::GenerateJob(o));
  for (size_t i = 2; i < ranks[0].size(); ++i) {
    const v1::StepReport& r = ranks[0][i].report;
    EXPECT_NE(r.primary_bottleneck(), v1::none) << "step " << i;
    EXPECT_NE(r.primary_bottleneck(), v1::gpu_bound) << "step " << i;
    EXPECT_EQ(r.comm().waited_for_rank(), 1) << "step " << i;
    const auto wait = std::find_if(r.findings().begin(), r.findings().end(),
                                   [](const v1::Finding& f) { return f.detector() == v1::straggler_wait; });
    ASSERT_NE(wait, r.findings().end()) << "step " << i;
    EXPECT_NE(wait->title().find("rank 1"), std::string::npos) << wait->title();
    const bool why = std::any_of(wait->evidence().begin(), wait->evidence().end(),
                                 [](const v1::Evidence& e) { return e.key() == "why_rank_1_is_late"; });
    EXPECT_TRUE(why) << "step " << i;
    const v1::StepReport& late = ranks[1][i].report;
    const auto straggler = std::find_if(late.findings().begin(), late.findings().end(),
                                        [](const v1::Finding& f) { return f.detector() == v1::straggler; });
    ASSERT_NE(straggler, late.findings().end()) << "step " << i;
    for (const v1::Finding& f : late.findings()) {
      EXPECT_LE(f.lost_ns(), late.findings(0).lost_ns()) << DetectorName(f.detector()) << ", step " << i;
    }
  }
}

struct MultiRankCase {
  Scenario scenario;
  int ranks;
  int64_t clock_skew_ns;
  bool collective_args;
};

std::string CaseName(const MultiRankCase& c) {
  return synthetic::ScenarioName(c.scenario) + "_" + std::to_string(c.ranks) + "ranks" +
         (c.clock_skew_ns != 0 ? "_skewed" : "") + (c.collective_args ? "" : "_live");
}

class MultiRankVerdicts : public ::testing::TestWithParam<MultiRankCase> {};

// Each rank's steady steps get that rank's expected verdict (the straggler and the ranks waiting
// for it are told apart), with or without clock skew between the ranks and with or without the
// collective args a Kineto trace has (live capture has kernel names only).
TEST_P(MultiRankVerdicts, EveryRankGetsItsExpectedPrimaryBottleneck) {
  const MultiRankCase c = GetParam();
  synthetic::SyntheticOptions o;
  o.scenario = c.scenario;
  o.ranks = c.ranks;
  o.steps = 8;
  o.seed = 23;
  o.clock_skew_ns = c.clock_skew_ns;
  o.emit_collective_args = c.collective_args;
  const std::vector<synthetic::SyntheticRank> job = synthetic::GenerateJob(o);
  const std::vector<std::vector<StepAnalysis>> ranks = AnalyzeJob(job);
  for (int r = 0; r < c.ranks; ++r) {
    ASSERT_EQ(ranks[r].size(), 8u);
    for (size_t i = 2; i < ranks[r].size(); ++i) {
      const v1::StepReport& report = ranks[r][i].report;
      EXPECT_TRUE(report.steady_state()) << "rank " << r << " step " << i;
      ExpectEvidenceRenderedFromItsNumbers(report);
      EXPECT_EQ(DetectorName(report.primary_bottleneck()), job[r].expected_primary[i])
          << "rank " << r << " step " << i << ": "
          << (report.findings().empty() ? std::string("no findings") : report.findings(0).title());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Jobs, MultiRankVerdicts,
    ::testing::Values(MultiRankCase{Scenario::kStragglerCompute, 4, 0, true},
                      MultiRankCase{Scenario::kStragglerCompute, 2, 0, true},
                      MultiRankCase{Scenario::kStragglerCompute, 8, 50'000'000, false},
                      MultiRankCase{Scenario::kStragglerInput, 4, 0, true},
                      MultiRankCase{Scenario::kStragglerInput, 4, 50'000'000, false},
                      MultiRankCase{Scenario::kExposedComm, 4, 0, true},
                      MultiRankCase{Scenario::kExposedComm, 2, 50'000'000, false},
                      MultiRankCase{Scenario::kCommStorm, 4, 0, true},
                      MultiRankCase{Scenario::kCommStorm, 4, 50'000'000, false}),
    [](const auto& info) { return CaseName(info.param); });

}  // namespace
}  // namespace gpuspy
