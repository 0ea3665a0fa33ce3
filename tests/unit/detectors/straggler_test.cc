// straggler: the rank the others waited for, and why it was late: a case that fires, a near miss just under each named threshold.
#include <gtest/gtest.h>

#include "tests/unit/detectors/comm_test_support.h"

namespace gpuspy::analysis {
namespace {

using comm_test::Check;
using comm_test::Evidence;
using comm_test::ms;
using comm_test::Step;

struct Peers {
  std::vector<v1::StepReport> reports;
  std::vector<PeerStep> steps;
};

Peers FastPeers(int64_t waited_for_me_ns) {
  Peers p;
  for (int r = 1; r <= 3; ++r) {
    v1::StepReport s = Step(r, 100 * ms);
    s.mutable_breakdown()->set_compute_busy_ns(60 * ms);
    s.mutable_breakdown()->set_comm_wait_ns(waited_for_me_ns);
    auto* k = s.add_top_kernels();
    k->set_name("sm80_xmma_gemm_bf16bf16");
    k->set_total_ns(60 * ms);
    k->set_median_ns(1 * ms);
    p.reports.push_back(s);
  }
  for (size_t i = 0; i < p.reports.size(); ++i) {
    p.steps.push_back({static_cast<int32_t>(i + 1), &p.reports[i], waited_for_me_ns});
  }
  return p;
}

v1::StepReport Late(int64_t compute_ns, int64_t kernel_median_ns, int64_t host_idle_ns) {
  v1::StepReport r = Step(0, 100 * ms);
  r.mutable_breakdown()->set_compute_busy_ns(compute_ns);
  r.mutable_breakdown()->set_idle_host_other_ns(host_idle_ns);
  auto* k = r.add_top_kernels();
  k->set_name("sm80_xmma_gemm_bf16bf16");
  k->set_total_ns(compute_ns);
  k->set_median_ns(kernel_median_ns);
  return r;
}

TEST(Straggler, MoreComputeWithTheSameKernelSpeedIsImbalance) {
  const Peers peers = FastPeers(20 * ms);
  const auto f = Check(&DetectStraggler, Late(80 * ms, 1 * ms, 0), peers.steps);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 20 * ms);
  EXPECT_EQ(Evidence(*f, "cause"), "more_compute");
  EXPECT_EQ(Evidence(*f, "ranks_waiting"), "3");
  // The renderers put "straggler: " before the title: it must not say it again.
  EXPECT_EQ(f->title().rfind("3 ranks wait up to 20.0 ms for this rank; ", 0), 0u) << f->title();
}

TEST(Straggler, OneWaitingRankTakesTheSingularVerb) {
  Peers peers = FastPeers(20 * ms);
  peers.steps.resize(1);
  const auto f = Check(&DetectStraggler, Late(80 * ms, 1 * ms, 0), peers.steps);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->title().rfind("1 rank waits up to ", 0), 0u) << f->title();
}

TEST(Straggler, TheSameKernelsSlowerIsTheGpu) {
  const Peers peers = FastPeers(20 * ms);
  const auto f = Check(&DetectStraggler, Late(80 * ms, 1'330'000, 0), peers.steps);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(Evidence(*f, "cause"), "slower_kernels");
}

TEST(Straggler, MoreHostIdleIsTheHost) {
  const Peers peers = FastPeers(20 * ms);
  const auto f = Check(&DetectStraggler, Late(60 * ms, 1 * ms, 20 * ms), peers.steps);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(Evidence(*f, "cause"), "host");
}

TEST(Straggler, NearMissPeersWaitedJustUnderFivePercent) {
  const Peers peers = FastPeers(5 * ms - 1);
  EXPECT_FALSE(Check(&DetectStraggler, Late(80 * ms, 1 * ms, 0), peers.steps).has_value());
}


// Fixing the straggler saves the job what the least-waiting peer waited: that peer is the next
// slowest rank, whose pace the step then runs at. The prediction is stated as a what-if.
TEST(Straggler, TheJobGainsWhatTheNextSlowestRankWaited) {
  Peers peers = FastPeers(20 * ms);
  peers.steps[1].waited_for_me_ns = 8 * ms;
  peers.steps[2].waited_for_me_ns = 15 * ms;
  const auto f = Check(&DetectStraggler, Late(80 * ms, 1 * ms, 0), peers.steps);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 8 * ms);
  EXPECT_EQ(Evidence(*f, "max_wait_caused"), "20.0 ms");
  EXPECT_EQ(Evidence(*f, "job_gain_if_fixed"), "8.0 ms");
  ASSERT_TRUE(f->has_what_if());
  EXPECT_EQ(f->what_if().step_ns(), 92 * ms);
  EXPECT_EQ(f->what_if().gain_ns(), 8 * ms);
  EXPECT_DOUBLE_EQ(f->what_if().gain_fraction(), 0.08);
}

// Near miss of a gain: another rank as slow as this one (it did not wait) bounds what fixing this
// rank alone saves at nothing, though two ranks wait for it.
TEST(Straggler, AnEquallySlowPeerLeavesNothingToGainAlone) {
  Peers peers = FastPeers(20 * ms);
  peers.steps[2].waited_for_me_ns = 0;
  const auto f = Check(&DetectStraggler, Late(80 * ms, 1 * ms, 0), peers.steps);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(Evidence(*f, "ranks_waiting"), "2");
  EXPECT_EQ(f->lost_ns(), 0);
  EXPECT_EQ(f->what_if().gain_ns(), 0);
}

}  // namespace
}  // namespace gpuspy::analysis
