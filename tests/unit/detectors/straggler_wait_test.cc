// straggler_wait: a rank waited inside collectives for a named peer: a case that fires, a near miss just under each named threshold.
#include <gtest/gtest.h>

#include "tests/unit/detectors/comm_test_support.h"

namespace gpuspy::analysis {
namespace {

using comm_test::Check;
using comm_test::Evidence;
using comm_test::ms;
using comm_test::Step;

v1::StepReport Waiting(int64_t exposed_wait_ns) {
  v1::StepReport r = Step(0, 100 * ms);
  r.mutable_breakdown()->set_comm_wait_ns(exposed_wait_ns + 5 * ms);
  r.mutable_comm()->set_wait_ns(exposed_wait_ns + 5 * ms);
  r.mutable_comm()->set_exposed_wait_ns(exposed_wait_ns);
  r.mutable_comm()->set_waited_for_rank(3);
  auto* c = r.mutable_comm()->add_collectives();
  c->set_op("allreduce");
  c->set_wait_ns(exposed_wait_ns);
  c->set_duration_ns(exposed_wait_ns + 2 * ms);
  c->set_last_rank(3);
  return r;
}

TEST(StragglerWait, FiresOnFivePercentOfTheStepWaitedWithNothingToRun) {
  const auto f = Check(&DetectStragglerWait, Waiting(5 * ms));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->detector(), v1::straggler_wait);
  EXPECT_EQ(f->lost_ns(), 5 * ms);
  EXPECT_EQ(Evidence(*f, "waited_for"), "rank 3");
  EXPECT_NE(f->title().find("rank 3"), std::string::npos);
  EXPECT_NE(f->fix_hint().find("--rank 3"), std::string::npos);
}

TEST(StragglerWait, NearMissJustUnderFivePercentOrOverlappedByCompute) {
  EXPECT_FALSE(Check(&DetectStragglerWait, Waiting(5 * ms - 1)).has_value());
  // 30 ms of raw wait, all of it beside compute: nothing lost.
  v1::StepReport overlapped = Waiting(0);
  overlapped.mutable_comm()->set_wait_ns(30 * ms);
  EXPECT_FALSE(Check(&DetectStragglerWait, overlapped).has_value());
}

TEST(StragglerWait, AnUncapturedPeerIsNamedAsSuch) {
  v1::StepReport r = Waiting(20 * ms);
  r.mutable_comm()->set_waited_for_rank(-2);
  const auto f = Check(&DetectStragglerWait, r);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(Evidence(*f, "waited_for"), "a peer that was not captured");
  EXPECT_NE(f->fix_hint().find("attach"), std::string::npos);
}


// A rank that waited 20 ms for rank 3 gains only what the job gains when rank 3 keeps pace: the
// least any rank waited for it (8 ms here); it keeps waiting 12 ms for the next slowest.
TEST(StragglerWait, GainsWhatTheJobGainsWhenTheLateRankKeepsPace) {
  const v1::StepReport r = Waiting(20 * ms);
  const std::vector<PeerStep> no_peers;
  const auto f = DetectStragglerWait(CommStepContext{r, no_peers, 8 * ms});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 8 * ms);
  EXPECT_EQ(Evidence(*f, "comm_wait_exposed"), "20.0 ms");
  EXPECT_EQ(Evidence(*f, "job_gain_if_fixed"), "8.0 ms");
  EXPECT_NE(f->title().find("waited 20.0 ms"), std::string::npos) << f->title();
  ASSERT_TRUE(f->has_what_if());
  EXPECT_EQ(f->what_if().step_ns(), 92 * ms);
  EXPECT_NE(f->what_if().fix().find("rank 3 keeping pace"), std::string::npos);
  // Near miss: a job gain above this rank's own wait caps at the wait (it cannot gain more).
  const auto capped = DetectStragglerWait(CommStepContext{r, no_peers, 30 * ms});
  ASSERT_TRUE(capped.has_value());
  EXPECT_EQ(capped->lost_ns(), 20 * ms);
}

}  // namespace
}  // namespace gpuspy::analysis
