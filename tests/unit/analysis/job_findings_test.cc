// A job's findings aggregated once (analysis/job_findings.h): what the job page, `gpuspy summary`
// and the HTML report list.
#include "analysis/detector_names.h"
#include "analysis/job_findings.h"

#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

v1::StepReport Step(int64_t n, std::vector<std::pair<std::string, int64_t>> findings,
                    const char* severity = "warning") {
  v1::StepReport r;
  r.mutable_step()->set_process_id(7);
  r.mutable_step()->set_number(n);
  for (const auto& [detector, lost] : findings) {
    v1::Finding* f = r.add_findings();
    f->set_detector(*analysis::ParseDetector(detector));
    f->set_lost_ns(lost);
    f->set_severity(*analysis::ParseSeverity(severity));
    f->set_title(detector + " in step " + std::to_string(n));
    f->set_fix_hint("fix " + detector);
  }
  return r;
}

TEST(JobFindings, AFindingInEveryStepOutranksABiggerOneInAFew) {
  const std::vector<v1::StepReport> steps = {
      Step(1, {{"sync_stall", 4}, {"copy_dominated", 9}}), Step(2, {{"sync_stall", 4}}),
      Step(3, {{"sync_stall", 4}}), Step(4, {{"sync_stall", 5}})};
  std::vector<const v1::StepReport*> basis;
  for (const auto& s : steps) basis.push_back(&s);
  const std::vector<v1::JobFinding> out = AggregateFindings(basis, true);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].detector(), v1::sync_stall);
  EXPECT_EQ(out[0].steps(), 4u);
  EXPECT_EQ(out[0].of_steps(), 4u);
  EXPECT_EQ(out[0].lost_per_step_ns(), 4);  // 17 / 4 steps
  EXPECT_EQ(out[0].median_lost_ns(), 4);
  EXPECT_EQ(out[0].worst_step().number(), 4);
  EXPECT_EQ(out[0].title(), "sync_stall in step 4");
  EXPECT_EQ(out[1].detector(), v1::copy_dominated);
  EXPECT_EQ(out[1].lost_per_step_ns(), 2);  // 9 over all 4 steps, not over the one it fired in
  EXPECT_TRUE(out[1].steady_only());
}

TEST(JobFindings, TheWorstSeverityIsTheFindings) {
  const std::vector<v1::StepReport> steps = {Step(1, {{"straggler", 1}}, "warning"),
                                             Step(2, {{"straggler", 1}}, "critical")};
  std::vector<const v1::StepReport*> basis = {&steps[0], &steps[1]};
  EXPECT_EQ(AggregateFindings(basis, false)[0].severity(), v1::critical);
}

TEST(JobFindings, HealthyStepsGiveNone) {
  const std::vector<v1::StepReport> steps = {Step(1, {}), Step(2, {})};
  std::vector<const v1::StepReport*> basis = {&steps[0], &steps[1]};
  EXPECT_TRUE(AggregateFindings(basis, true).empty());
}

}  // namespace
}  // namespace gpuspy::analysis
