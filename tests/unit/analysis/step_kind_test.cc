// What a step is (analysis/step_kind.h), decided once for every screen.
#include "analysis/detector_names.h"
#include "analysis/step_kind.h"

#include <gtest/gtest.h>

#include "analysis/step_source.h"

namespace gpuspy::analysis {
namespace {

v1::StepReport Report(bool steady, const char* finding = nullptr) {
  v1::StepReport r;
  r.mutable_step()->set_source("nvtx:ProfilerStep#*");
  r.set_steady_state(steady);
  if (finding != nullptr) r.add_findings()->set_detector(*analysis::ParseDetector(finding));
  return r;
}

TEST(StepKind, SteadyWarmupOutlierAndOtherwiseUnsteady) {
  EXPECT_EQ(StepKindOf(Report(true)), v1::STEP_KIND_STEADY);
  EXPECT_EQ(StepKindOf(Report(false, "warmup")), v1::STEP_KIND_WARMUP);
  EXPECT_EQ(StepKindOf(Report(false, "outlier_step")), v1::STEP_KIND_OUTLIER);
  EXPECT_EQ(StepKindOf(Report(false, "sync_stall")), v1::STEP_KIND_UNSTEADY);
}

TEST(StepKind, ATimeWindowIsNoStepWhateverElseItSays) {
  v1::StepReport r = Report(true, "warmup");
  r.mutable_step()->set_source(WindowSource(1'000'000'000));
  EXPECT_EQ(StepKindOf(r), v1::STEP_KIND_WINDOW);
  EXPECT_STREQ(StepKindLabel(StepKindOf(r)), "time window, not a step");
}

TEST(StepKind, ARecordingThatCannotCarryAVerdictSaysSoBeforeSteadiness) {
  v1::StepReport r = Report(true);
  r.mutable_data_quality()->set_insufficient(true);
  EXPECT_EQ(StepKindOf(r), v1::STEP_KIND_INSUFFICIENT_DATA);
}

}  // namespace
}  // namespace gpuspy::analysis
