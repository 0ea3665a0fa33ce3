// Each communication detector on hand-built step reports: one case that fires, one just under
// each named threshold.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "collector/analysis/detectors/comm_context.h"

namespace gpuspy::analysis {
namespace {

constexpr int64_t ms = 1'000'000;

v1::StepReport Step(int32_t rank, int64_t wall_ns) {
  v1::StepReport r;
  r.mutable_step()->set_start_ns(0);
  r.mutable_step()->set_end_ns(wall_ns);
  r.mutable_breakdown()->set_wall_ns(wall_ns);
  r.mutable_comm()->set_rank(rank);
  r.mutable_comm()->set_waited_for_rank(-1);
  return r;
}

std::string Evidence(const v1::Finding& f, const std::string& key) {
  for (const auto& e : f.evidence()) {
    if (e.key() == key) return e.value();
  }
  return "";
}

std::optional<v1::Finding> Check(CommDetector detect, const v1::StepReport& r,
                               const std::vector<PeerStep>& peers = {}) {
  return detect(CommStepContext{r, peers});
}

// --- straggler_wait

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
  EXPECT_EQ(f->detector(), "straggler_wait");
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

// --- straggler

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

// --- exposed_comm

v1::StepReport Exposed(int64_t exposed_ns, int64_t exposed_wait_ns) {
  v1::StepReport r = Step(0, 100 * ms);
  r.mutable_breakdown()->set_communication_ns(exposed_ns + exposed_wait_ns + 10 * ms);
  r.mutable_breakdown()->set_exposed_comm_ns(exposed_ns + exposed_wait_ns);
  r.mutable_comm()->set_exposed_wait_ns(exposed_wait_ns);
  r.mutable_comm()->set_tail_ns(exposed_ns);
  r.mutable_comm()->set_collective_count(4);
  return r;
}

TEST(ExposedComm, FiresOnFifteenPercentOfTheStepWithNothingOverlapping) {
  const auto f = Check(&DetectExposedComm, Exposed(15 * ms, 0));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 15 * ms);
  EXPECT_EQ(Evidence(*f, "tail_after_compute"), "15.0 ms");
}

TEST(ExposedComm, NearMissJustUnderOrWhenTheExposureIsAWait) {
  EXPECT_FALSE(Check(&DetectExposedComm, Exposed(15 * ms - 1, 0)).has_value());
  // 30 ms exposed, 20 of it waiting for a late rank: that is straggler_wait's.
  EXPECT_FALSE(Check(&DetectExposedComm, Exposed(10 * ms, 20 * ms)).has_value());
}

// --- comm_storm

v1::StepReport Storm(uint64_t count, uint64_t median_bytes, int64_t comm_ns) {
  v1::StepReport r = Step(0, 100 * ms);
  r.mutable_breakdown()->set_communication_ns(comm_ns);
  r.mutable_comm()->set_collective_count(count);
  r.mutable_comm()->set_median_bytes(median_bytes);
  r.mutable_comm()->set_bytes(count * median_bytes);
  r.mutable_comm()->set_transfer_ns(comm_ns);
  return r;
}

TEST(CommStorm, FiresOnHundredsOfSmallCollectives) {
  const auto f = Check(&DetectCommStorm, Storm(400, 32 << 10, 12 * ms));
  ASSERT_TRUE(f.has_value());
  // 400 x 32 KiB coalesce into one 25 MiB bucket: 399 collectives of 30 us saved.
  EXPECT_EQ(f->lost_ns(), 399 * 30'000);
  EXPECT_EQ(Evidence(*f, "coalesced_estimate"), "1 collectives");
  // A storm's exposure is the storm's, not exposed_comm's.
  v1::StepReport r = Storm(400, 32 << 10, 20 * ms);
  r.mutable_breakdown()->set_exposed_comm_ns(20 * ms);
  EXPECT_FALSE(Check(&DetectExposedComm, r).has_value());
}

TEST(CommStorm, FiresWithoutSizesWhenEachCollectiveIsLatencyBound) {
  EXPECT_TRUE(Check(&DetectCommStorm, Storm(400, 0, 12 * ms)).has_value());
  EXPECT_FALSE(Check(&DetectCommStorm, Storm(100, 0, 11 * ms)).has_value());  // 110 us each
}

TEST(CommStorm, NearMissesJustUnderEachThreshold) {
  EXPECT_FALSE(Check(&DetectCommStorm, Storm(99, 32 << 10, 12 * ms)).has_value());
  EXPECT_FALSE(Check(&DetectCommStorm, Storm(400, (512 << 10) + 1, 12 * ms)).has_value());
  EXPECT_FALSE(Check(&DetectCommStorm, Storm(400, 32 << 10, 10 * ms - 1)).has_value());
}

}  // namespace
}  // namespace gpuspy::analysis
