// comm_storm: many small collectives (a DDP bucket too small): a case that fires, a near miss just under each named threshold.
#include <gtest/gtest.h>

#include "tests/unit/detectors/comm_test_support.h"

namespace gpuspy::analysis {
namespace {

using comm_test::Check;
using comm_test::Evidence;
using comm_test::ms;
using comm_test::Step;

v1::StepReport Storm(uint64_t count, uint64_t median_bytes, int64_t comm_ns) {
  v1::StepReport r = Step(0, 100 * ms);
  r.mutable_breakdown()->set_communication_ns(comm_ns);
  r.mutable_comm()->set_collective_count(count);
  r.mutable_comm()->set_median_bytes(median_bytes);
  r.mutable_comm()->set_bytes(count * median_bytes);
  r.mutable_comm()->set_transfer_ns(comm_ns);
  r.mutable_breakdown()->set_exposed_comm_ns(comm_ns);  // no compute overlaps it
  return r;
}

TEST(CommStorm, FiresOnHundredsOfSmallCollectives) {
  const auto f = Check(&DetectCommStorm, Storm(400, 32 << 10, 12 * ms));
  ASSERT_TRUE(f.has_value());
  // 400 x 32 KiB coalesce into one 25 MiB bucket: 399 collectives of 30 us saved.
  EXPECT_EQ(f->lost_ns(), 399 * 30'000);
  EXPECT_EQ(Evidence(*f, "coalesced_estimate"), "1 collective");
  // A storm's exposure is the storm's, not exposed_comm's.
  v1::StepReport r = Storm(400, 32 << 10, 20 * ms);
  r.mutable_breakdown()->set_exposed_comm_ns(20 * ms);
  EXPECT_FALSE(Check(&DetectExposedComm, r).has_value());
}

TEST(CommStorm, LosesNoMoreThanTheExposedCommunication) {
  // 12 ms of collectives, of which compute overlaps all but 5.3 ms: coalescing saves the step at
  // most what is exposed (it was "~13.21 ms lost" beside "exposed_comm=5.3 ms").
  v1::StepReport r = Storm(400, 32 << 10, 12 * ms);
  r.mutable_breakdown()->set_exposed_comm_ns(5'300'000);
  const auto f = Check(&DetectCommStorm, r);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 5'300'000);
  EXPECT_EQ(Evidence(*f, "exposed_comm"), "5.3 ms");
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
