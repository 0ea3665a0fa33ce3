// A job's steady-state summary from its step reports.
#include "analysis/detector_names.h"
#include "analysis/job_summary.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

struct KernelSpec {
  std::string name;
  uint64_t count;
  int64_t total_ns;
  int64_t median_ns;
  bool tensor_cores;
};

v1::StepReport Step(int64_t number, int64_t wall_ns, int64_t busy_ns, bool steady,
                    const std::string& bottleneck = "none", int64_t lost_ns = 0,
                    const std::vector<KernelSpec>& kernels = {}) {
  v1::StepReport r;
  r.mutable_step()->set_number(number);
  r.mutable_breakdown()->set_wall_ns(wall_ns);
  r.mutable_breakdown()->set_gpu_busy_ns(busy_ns);
  r.set_steady_state(steady);
  r.set_primary_bottleneck(*analysis::ParseDetector(bottleneck));
  if (bottleneck != "none" && !bottleneck.empty()) {
    auto* f = r.add_findings();
    f->set_detector(*analysis::ParseDetector(bottleneck));
    f->set_lost_ns(lost_ns);
  }
  for (const KernelSpec& k : kernels) {
    auto* ks = r.add_top_kernels();
    ks->set_name(k.name);
    ks->set_count(k.count);
    ks->set_total_ns(k.total_ns);
    ks->set_median_ns(k.median_ns);
    ks->set_tensor_cores(k.tensor_cores);
  }
  return r;
}

std::vector<std::string> Detectors(const v1::JobSummary& s) {
  std::vector<std::string> out;
  for (const auto& b : s.bottlenecks()) out.push_back(analysis::DetectorName(b.detector()));
  return out;
}

TEST(JobSummary, CopiesIdentityAndCounts) {
  const v1::JobSummary s =
      SummarizeJob("job-42", {Step(1, 100, 50, true), Step(2, 100, 50, false)}, 4, 123456);
  EXPECT_EQ(s.job_id(), "job-42");
  EXPECT_EQ(s.process_count(), 4u);
  EXPECT_EQ(s.event_count(), 123456u);
  EXPECT_EQ(s.step_count(), 2u);
  EXPECT_EQ(s.steady_step_count(), 1u);
}

TEST(JobSummary, MediansOverSteadyStepsOnly) {
  // The warm-up step is 10x slower and nearly idle; it must not move the medians.
  const std::vector<v1::StepReport> steps = {
      Step(0, 5'000, 100, /*steady=*/false),
      Step(1, 300, 150, true),   // busy 0.5
      Step(2, 100, 90, true),    // busy 0.9
      Step(3, 200, 140, true),   // busy 0.7
      Step(4, 9'000, 0, false),  // outlier
  };
  const v1::JobSummary s = SummarizeJob("j", steps, 1, 0);
  EXPECT_EQ(s.step_count(), 5u);
  EXPECT_EQ(s.steady_step_count(), 3u);
  EXPECT_EQ(s.median_step_wall_ns(), 200);
  EXPECT_DOUBLE_EQ(s.median_gpu_busy_fraction(), 0.7);
}

TEST(JobSummary, AllStepsUsedWhenNoneIsSteady) {
  const std::vector<v1::StepReport> steps = {Step(1, 100, 10, false), Step(2, 300, 30, false),
                                             Step(3, 200, 200, false)};
  const v1::JobSummary s = SummarizeJob("j", steps, 1, 0);
  EXPECT_EQ(s.steady_step_count(), 3u);
  EXPECT_EQ(s.median_step_wall_ns(), 200);
  EXPECT_DOUBLE_EQ(s.median_gpu_busy_fraction(), 0.1);
}

TEST(JobSummary, ZeroWallStepCountsAsIdleNotNaN) {
  const v1::JobSummary s = SummarizeJob("j", {Step(1, 0, 0, true)}, 1, 0);
  EXPECT_EQ(s.median_step_wall_ns(), 0);
  EXPECT_DOUBLE_EQ(s.median_gpu_busy_fraction(), 0.0);
}

TEST(JobSummary, NoStepsGivesAnEmptySummary) {
  const v1::JobSummary s = SummarizeJob("j", {}, 2, 10);
  EXPECT_EQ(s.step_count(), 0u);
  EXPECT_EQ(s.steady_step_count(), 0u);
  EXPECT_EQ(s.median_step_wall_ns(), 0);
  EXPECT_EQ(s.bottlenecks_size(), 0);
  EXPECT_EQ(s.top_kernels_size(), 0);
}

TEST(JobSummary, BottlenecksRankedByStepCountWithMedianLoss) {
  const std::vector<v1::StepReport> steps = {
      Step(1, 100, 10, true, "sync_stall", 40),
      Step(2, 100, 10, true, "launch_storm", 5),
      Step(3, 100, 10, true, "sync_stall", 60),
      Step(4, 100, 10, true, "launch_storm", 7),
      Step(5, 100, 10, true, "sync_stall", 50),
      Step(6, 100, 10, true, "alloc_churn", 90),
      Step(7, 100, 10, true, "launch_storm", 9),
      Step(8, 100, 10, true, "sync_stall", 10),
      Step(9, 100, 90, true, "none"),
      Step(10, 100, 10, false, "input_stall", 1'000),  // warm-up: not counted
  };
  const v1::JobSummary s = SummarizeJob("j", steps, 1, 0);
  ASSERT_THAT(Detectors(s), ::testing::ElementsAre("sync_stall", "launch_storm", "alloc_churn"));
  EXPECT_EQ(s.bottlenecks(0).steps(), 4u);
  // Losses 10, 40, 50, 60: the upper median of an even count.
  EXPECT_EQ(s.bottlenecks(0).median_lost_ns(), 50);
  EXPECT_EQ(s.bottlenecks(1).steps(), 3u);
  EXPECT_EQ(s.bottlenecks(1).median_lost_ns(), 7);
  EXPECT_EQ(s.bottlenecks(2).steps(), 1u);
  EXPECT_EQ(s.bottlenecks(2).median_lost_ns(), 90);
}

TEST(JobSummary, BottleneckTiesAreOrderedByName) {
  const std::vector<v1::StepReport> steps = {Step(1, 100, 10, true, "sync_stall", 1),
                                             Step(2, 100, 10, true, "copy_dominated", 1),
                                             Step(3, 100, 10, true, "alloc_churn", 1)};
  EXPECT_THAT(Detectors(SummarizeJob("j", steps, 1, 0)),
              ::testing::ElementsAre("alloc_churn", "copy_dominated", "sync_stall"));
}

TEST(JobSummary, TopKernelsAggregateAcrossSteadyStepsByTotalTime) {
  const std::vector<v1::StepReport> steps = {
      Step(1, 100, 10, true, "none", 0,
           {{"sgemm", 10, 1'000, 100, false}, {"xmma_gemm_bf16", 2, 900, 450, true}}),
      Step(2, 100, 10, true, "none", 0,
           {{"sgemm", 10, 1'100, 110, false}, {"xmma_gemm_bf16", 2, 1'500, 750, true}}),
      Step(3, 100, 10, true, "none", 0,
           {{"sgemm", 10, 1'200, 120, false}, {"elementwise", 100, 50, 1, false}}),
      Step(4, 100, 10, false, "none", 0, {{"warmup_only", 1, 1'000'000, 1'000'000, false}}),
  };
  const v1::JobSummary s = SummarizeJob("j", steps, 1, 0);
  ASSERT_EQ(s.top_kernels_size(), 3);
  EXPECT_EQ(s.top_kernels(0).name(), "sgemm");
  EXPECT_EQ(s.top_kernels(0).count(), 30u);
  EXPECT_EQ(s.top_kernels(0).total_ns(), 3'300);
  EXPECT_EQ(s.top_kernels(0).median_ns(), 110);
  EXPECT_FALSE(s.top_kernels(0).tensor_cores());
  EXPECT_EQ(s.top_kernels(1).name(), "xmma_gemm_bf16");
  EXPECT_EQ(s.top_kernels(1).count(), 4u);
  EXPECT_EQ(s.top_kernels(1).total_ns(), 2'400);
  EXPECT_TRUE(s.top_kernels(1).tensor_cores());
  EXPECT_EQ(s.top_kernels(2).name(), "elementwise");
  EXPECT_EQ(s.top_kernels(2).count(), 100u);
}

TEST(JobSummary, TopKernelsAreCappedAtTen) {
  std::vector<KernelSpec> kernels;
  for (int i = 0; i < 15; ++i) {
    kernels.push_back({"k" + std::to_string(i), 1, 100 + i, 1, false});
  }
  const v1::JobSummary s = SummarizeJob("j", {Step(1, 100, 10, true, "none", 0, kernels)}, 1, 0);
  ASSERT_EQ(s.top_kernels_size(), 10);
  EXPECT_EQ(s.top_kernels(0).name(), "k14");
  EXPECT_EQ(s.top_kernels(9).name(), "k5");
}

void AddClass(v1::StepReport* r, const std::string& name, int64_t ns, uint64_t count) {
  auto* c = r->add_kernel_classes();
  c->set_kernel_class(name);
  c->set_ns(ns);
  c->set_count(count);
}

TEST(JobSummary, RanksWhereTheGpuTimeGoesOverSteadySteps) {
  std::vector<v1::StepReport> steps = {Step(0, 100, 90, false), Step(1, 100, 90, true),
                                       Step(2, 100, 90, true)};
  AddClass(&steps[0], "other", 1'000, 10);  // warm-up: not counted
  AddClass(&steps[1], "gemm_tc", 40, 2);
  AddClass(&steps[1], "elementwise", 50, 8);
  AddClass(&steps[2], "elementwise", 50, 8);
  AddClass(&steps[2], "gemm_tc", 40, 2);
  AddClass(&steps[2], "comm", 20, 1);
  const v1::JobSummary s = SummarizeJob("j", steps, 1, 0);
  ASSERT_EQ(s.kernel_classes_size(), 3);
  EXPECT_EQ(s.kernel_classes(0).kernel_class(), "elementwise");
  EXPECT_EQ(s.kernel_classes(0).ns(), 100);
  EXPECT_EQ(s.kernel_classes(0).count(), 16u);
  EXPECT_DOUBLE_EQ(s.kernel_classes(0).share(), 0.5);
  EXPECT_EQ(s.kernel_classes(1).kernel_class(), "gemm_tc");
  EXPECT_EQ(s.kernel_classes(2).kernel_class(), "comm");
  EXPECT_DOUBLE_EQ(s.kernel_classes(2).share(), 0.1);
}

// A GPU-bound job's primary verdict can be unfused_elementwise on some steps and gpu_bound (lost
// 0) on others; the largest gain counts every finding's lost time over the steady steps.
TEST(JobSummary, LargestGainIsTheDetectorLosingTheMostOverSteadySteps) {
  std::vector<v1::StepReport> steps = {Step(0, 100, 90, false, "warmup", 500),
                                       Step(1, 100, 95, true, "unfused_elementwise", 30),
                                       Step(2, 100, 95, true, "sync_stall", 20),
                                       Step(3, 100, 95, true, "unfused_elementwise", 40)};
  steps[1].mutable_findings(0)->set_fix_hint("torch.compile, small");
  steps[3].mutable_findings(0)->set_fix_hint("torch.compile, large");
  auto* extra = steps[2].add_findings();  // not primary on step 2, still a gain
  extra->set_detector(v1::unfused_elementwise);
  extra->set_lost_ns(10);
  const v1::JobSummary s = SummarizeJob("j", steps, 1, 0);
  ASSERT_TRUE(s.has_largest_gain());
  EXPECT_EQ(s.largest_gain().detector(), v1::unfused_elementwise);
  EXPECT_EQ(s.largest_gain().steps(), 3u);
  EXPECT_EQ(s.largest_gain().total_lost_ns(), 80);
  EXPECT_EQ(s.largest_gain().median_lost_ns(), 30);
  EXPECT_EQ(s.largest_gain().fix_hint(), "torch.compile, large");
}

TEST(JobSummary, NoLargestGainWhenNothingLosesTime) {
  const v1::JobSummary s = SummarizeJob("j", {Step(1, 100, 95, true, "gpu_bound", 0)}, 1, 0);
  EXPECT_FALSE(s.has_largest_gain());
}

}  // namespace
}  // namespace gpuspy::analysis

namespace gpuspy::analysis {
namespace {

// An excerpt's step (16 of 18 GPU ops without a launch, 0.7 % of the step recorded) cannot carry a
// verdict: it is in no job figure, neither the median step nor a finding's lost time.
TEST(JobSummary, StepsWithoutTheDataForAVerdictAreInNoFigure) {
  std::vector<v1::StepReport> steps = {Step(1, 100, 90, true, "gpu_bound"), Step(2, 110, 95, true, "gpu_bound"),
                                       Step(3, 13'000'000'000, 1, true, "host_bound", 12'000'000'000)};
  steps[2].mutable_data_quality()->set_insufficient(true);
  const v1::JobSummary s = SummarizeJob("j", steps, 1, 0);
  EXPECT_EQ(s.steady_step_count(), 2u);
  EXPECT_EQ(s.median_step_wall_ns(), 110);
  for (const v1::JobFinding& f : s.findings()) EXPECT_NE(f.detector(), v1::host_bound);
  EXPECT_FALSE(s.has_largest_gain());
}

}  // namespace
}  // namespace gpuspy::analysis
