// exposed_comm: communication not overlapped with compute: a case that fires, a near miss just under each named threshold.
#include <gtest/gtest.h>

#include "tests/unit/detectors/comm_test_support.h"

namespace gpuspy::analysis {
namespace {

using comm_test::Check;
using comm_test::Evidence;
using comm_test::ms;
using comm_test::Step;

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

}  // namespace
}  // namespace gpuspy::analysis
