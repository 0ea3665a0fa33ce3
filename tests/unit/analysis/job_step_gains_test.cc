// What a fix saves a job whose ranks meet in collectives: the slowest rank's own work sets the
// pace (job_step_gains.h).
#include "analysis/job_step_gains.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuspy::analysis {
namespace {

constexpr int64_t ms = 1'000'000;

// A rank's step of `wall_ns`, `exposed_wait_ns` of it waiting in collectives for a peer.
v1::StepReport Rank(int64_t wall_ns, int64_t exposed_wait_ns) {
  v1::StepReport r;
  r.mutable_breakdown()->set_wall_ns(wall_ns);
  r.mutable_comm()->set_exposed_wait_ns(exposed_wait_ns);
  return r;
}

void AddFinding(v1::StepReport* r, v1::Detector detector, int64_t gain_ns) {
  v1::Finding* f = r->add_findings();
  f->set_detector(detector);
  f->set_lost_ns(gain_ns);
  f->mutable_what_if()->set_fix("the fix");
  f->mutable_what_if()->set_gain_ns(gain_ns);
  f->mutable_what_if()->set_step_ns(r->breakdown().wall_ns() - gain_ns);
}

std::vector<v1::StepReport*> All(std::vector<v1::StepReport>& ranks) {
  std::vector<v1::StepReport*> out;
  for (auto& r : ranks) out.push_back(&r);
  return out;
}

// Rank 2 is slow (own work 100 ms); ranks 0 and 1 wait 20 and 25 ms for it.
std::vector<v1::StepReport> Job() { return {Rank(100 * ms, 20 * ms), Rank(100 * ms, 25 * ms), Rank(100 * ms, 0)}; }

TEST(JobStepGains, ACauseOnEveryRankSavesWhatItSavesTheSlowestRank) {
  std::vector<v1::StepReport> job = Job();
  AddFinding(&job[0], v1::sync_stall, 8 * ms);  // own work 80 -> 72
  AddFinding(&job[1], v1::sync_stall, 8 * ms);  // 75 -> 67
  AddFinding(&job[2], v1::sync_stall, 9 * ms);  // 100 -> 91: still the slowest
  SetJobGains(All(job), false);
  for (const auto& r : job) {
    EXPECT_EQ(r.findings(0).lost_ns(), 9 * ms);
    EXPECT_EQ(r.findings(0).what_if().gain_ns(), 9 * ms);
    EXPECT_EQ(r.findings(0).what_if().step_ns(), 91 * ms);
  }
  // What the rank alone would save stays as evidence.
  ASSERT_GT(job[0].findings(0).evidence_size(), 0);
  EXPECT_EQ(job[0].findings(0).evidence(0).key(), kThisRankAloneKey);
  EXPECT_EQ(job[0].findings(0).evidence(0).quantity(), 8 * ms);
}

TEST(JobStepGains, ACauseOnAFastRankSavesTheJobNothing) {
  std::vector<v1::StepReport> job = Job();
  AddFinding(&job[0], v1::host_bound, 15 * ms);
  SetJobGains(All(job), false);
  EXPECT_EQ(job[0].findings(0).lost_ns(), 0);
  EXPECT_EQ(job[0].findings(0).what_if().gain_ns(), 0);
}

TEST(JobStepGains, ACauseOnTheSlowestRankSavesUntilTheNextSlowestSetsThePace) {
  std::vector<v1::StepReport> job = Job();
  AddFinding(&job[2], v1::input_stall, 30 * ms);  // 100 -> 70, but rank 0 needs 80
  SetJobGains(All(job), false);
  EXPECT_EQ(job[2].findings(0).lost_ns(), 20 * ms);
  // Near miss: a smaller gain is kept whole.
  std::vector<v1::StepReport> small = Job();
  AddFinding(&small[2], v1::input_stall, 12 * ms);
  SetJobGains(All(small), false);
  EXPECT_EQ(small[2].findings(0).lost_ns(), 12 * ms);
  EXPECT_EQ(small[2].findings(0).evidence_size(), 0);  // nothing changed, nothing to explain
}

TEST(JobStepGains, AnUncapturedLateRankKeepsThePace) {
  // Both captured ranks waited for a rank that was not captured: their own fixes save nothing.
  std::vector<v1::StepReport> job{Rank(100 * ms, 30 * ms), Rank(100 * ms, 35 * ms)};
  AddFinding(&job[0], v1::sync_stall, 10 * ms);
  AddFinding(&job[1], v1::sync_stall, 10 * ms);
  SetJobGains(All(job), true);
  EXPECT_EQ(job[0].findings(0).lost_ns(), 0);
  EXPECT_EQ(job[1].findings(0).lost_ns(), 0);
}

TEST(JobStepGains, RunningTwiceGivesTheSameGains) {
  std::vector<v1::StepReport> job = Job();
  AddFinding(&job[0], v1::sync_stall, 8 * ms);
  AddFinding(&job[2], v1::sync_stall, 9 * ms);
  SetJobGains(All(job), false);
  SetJobGains(All(job), false);
  EXPECT_EQ(job[0].findings(0).lost_ns(), 9 * ms);
  EXPECT_EQ(job[0].findings(0).evidence_size(), 1);
  EXPECT_EQ(job[0].findings(0).evidence(0).quantity(), 8 * ms);
}

TEST(JobStepGains, OneRankAloneKeepsItsOwnGains) {
  std::vector<v1::StepReport> job{Rank(100 * ms, 0)};
  AddFinding(&job[0], v1::sync_stall, 10 * ms);
  SetJobGains(All(job), false);
  EXPECT_EQ(job[0].findings(0).lost_ns(), 10 * ms);
}

}  // namespace
}  // namespace gpuspy::analysis
