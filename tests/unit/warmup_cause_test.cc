// A warm-up (or outlier) step whose time went into the driver says so: the cuda_api_bound
// finding's time and title become evidence on the series finding, which is the step's verdict.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/step_series.h"
#include "tests/unit/detectors/detector_test_steps.h"

namespace gpuspy::analysis {
namespace {

using testing::Evidence;
constexpr int64_t kMs = 1'000'000;

// Six 10 ms steps; the first takes `first_ms`, `driver_ms` of it inside CUDA calls (0: none).
std::vector<StepAnalysis> Series(int64_t first_ms, int64_t driver_ms) {
  std::vector<StepAnalysis> out;
  for (int64_t i = 0; i < 6; ++i) {
    StepAnalysis a;
    a.report.mutable_step()->set_number(i);
    a.report.mutable_step()->set_source("nvtx:test");
    a.report.mutable_breakdown()->set_wall_ns(i == 0 ? first_ms * kMs : 10 * kMs);
    a.report.set_steady_state(true);
    if (i == 0 && driver_ms > 0) {
      v1::Finding* f = a.report.add_findings();
      f->set_detector(v1::cuda_api_bound);
      f->set_title("CUDA start-up: GPU idle ... mostly cudaFree (CUDA context or library initialisation)");
      f->set_lost_ns(driver_ms * kMs);
    }
    out.push_back(std::move(a));
  }
  return out;
}

TEST(WarmupCause, AWarmupStepNamesItsCudaStartUp) {
  std::vector<StepAnalysis> steps = Series(900, 850);
  AnalyzeStepSeries(&steps);
  const v1::StepReport& r = steps[0].report;
  ASSERT_EQ(r.primary_bottleneck(), v1::warmup);
  EXPECT_THAT(Evidence(r.findings(0), "in_cuda_calls"),
              ::testing::HasSubstr("850.0 ms of it: CUDA start-up"));
}

TEST(WarmupCause, WithoutDriverWorkNothingIsSaid) {
  std::vector<StepAnalysis> steps = Series(900, 0);
  AnalyzeStepSeries(&steps);
  ASSERT_EQ(steps[0].report.primary_bottleneck(), v1::warmup);
  EXPECT_EQ(Evidence(steps[0].report.findings(0), "in_cuda_calls"), "");
}

}  // namespace
}  // namespace gpuspy::analysis
