// One cost, one finding (detectors/merge_findings.cc): GPU idle inside cudaMalloc/cudaFree is
// counted once, under alloc_churn, not again under cuda_api_bound.
#include <gtest/gtest.h>

#include "analysis/detector_names.h"
#include "analysis/detectors/detectors.h"
#include "tests/unit/detectors/detector_test_steps.h"

namespace gpuspy::analysis {
namespace {

using testing::DetectorStep;
constexpr int64_t us = 1'000;

// 1000 µs of compute, then twelve 150 µs allocator calls with the GPU idle: driver work long
// enough for cuda_api_bound, and churn.
DetectorStep Churn() {
  DetectorStep s;
  s.Then(testing::kTcGemm, 1'000 * us);
  for (int i = 0; i < 12; ++i) {
    const int64_t t = 1'000 * us + i * 150 * us;
    s.Call(i % 2 == 0 ? "cudaMalloc" : "cudaFree", t, t + 150 * us);
  }
  s.Idle(12 * 150 * us);
  return s;
}

int Count(const v1::StepReport& r, const char* detector) {
  int n = 0;
  for (const v1::Finding& f : r.findings()) n += analysis::DetectorName(f.detector()) == detector;
  return n;
}

TEST(MergeFindings, AllocatorIdleIsAllocChurnsAloneAndTheDriverAngleIsEvidence) {
  DetectorStep s = Churn();
  ASSERT_TRUE(s.Run(&DetectCudaApiBound).has_value());  // on its own it would fire
  const v1::StepReport& r = s.report();
  EXPECT_EQ(Count(r, "alloc_churn"), 1);
  EXPECT_EQ(Count(r, "cuda_api_bound"), 0);
  EXPECT_EQ(r.primary_bottleneck(), v1::alloc_churn);
  EXPECT_EQ(testing::Evidence(r.findings(0), "in_cuda_calls").substr(0, 6), "1.8 ms");
}

TEST(MergeFindings, DriverWorkBeyondTheAllocatorStaysCudaApiBoundWithTheRestOnly) {
  DetectorStep s = Churn();
  s.Call("cuModuleLoadData", 2'800 * us, 3'800 * us);  // 1 ms of module loading, GPU idle
  s.Idle(1'000 * us);
  s.Run(&DetectCudaApiBound);
  const v1::StepReport& r = s.report();
  ASSERT_EQ(Count(r, "cuda_api_bound"), 1);
  int64_t churn = 0, driver = 0;
  for (const v1::Finding& f : r.findings()) {
    if (f.detector() == v1::alloc_churn) churn = f.lost_ns();
    if (f.detector() == v1::cuda_api_bound) driver = f.lost_ns();
  }
  // What each fix saves (the replay): the allocator's 1.8 ms less what cached allocations still
  // cost, and the module load only: 2.8 ms in CUDA calls less the allocator's.
  EXPECT_NEAR(churn, 1'800 * us, 50 * us);
  EXPECT_NEAR(driver, 1'000 * us, 50 * us);
}


v1::Finding Finding(const std::string& detector, int64_t lost_ns, int64_t wall_ns) {
  v1::Finding f;
  f.set_detector(*analysis::ParseDetector(detector));
  f.set_lost_ns(lost_ns);
  f.set_severity(v1::warning);
  v1::WhatIf* w = f.mutable_what_if();
  w->set_gain_ns(lost_ns);
  w->set_step_ns(wall_ns - lost_ns);
  w->set_gain_fraction(static_cast<double>(lost_ns) / wall_ns);
  return f;
}

// A straggler late because of its syncs and the sync stall are one cost: one finding, the larger
// figure (and its what-if) on the straggler, the stall's evidence with it.
TEST(MergeFindings, AStragglerLateForItsSyncsAbsorbsItsSyncStall) {
  std::vector<v1::Finding> found{Finding("straggler", 40 * us, 100 * us),
                                 Finding("sync_stall", 43 * us, 100 * us)};
  AddEvidence(&found[0], "cause", "sync");
  MergeStragglerCause(&found);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].detector(), v1::straggler);
  EXPECT_EQ(found[0].lost_ns(), 43 * us);
  EXPECT_EQ(found[0].what_if().gain_ns(), 43 * us);
  // Near miss: a straggler late for its compute keeps the sync stall apart.
  std::vector<v1::Finding> apart{Finding("straggler", 40 * us, 100 * us),
                                 Finding("sync_stall", 43 * us, 100 * us)};
  AddEvidence(&apart[0], "cause", "more_compute");
  MergeStragglerCause(&apart);
  EXPECT_EQ(apart.size(), 2u);
}

}  // namespace
}  // namespace gpuspy::analysis
