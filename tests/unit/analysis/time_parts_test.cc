// A step's wall time split by cause (analysis/time_parts.h): the parts every screen draws add up
// to the wall time, and exposed communication is split into waiting and transfer.
#include "analysis/time_parts.h"

#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

int64_t Sum(const v1::StepBreakdown& b) {
  int64_t sum = 0;
  for (const v1::TimePart& p : b.parts()) sum += p.ns();
  return sum;
}

TEST(TimeParts, PartsAddUpToTheWallTimeInCauseOrder) {
  v1::StepBreakdown b;
  b.set_wall_ns(100);
  b.set_gpu_busy_ns(70);
  b.set_kernel_ns(60);
  b.set_idle_sync_blocked_ns(20);
  b.set_idle_host_other_ns(10);
  SetTimeParts(&b);
  EXPECT_EQ(Sum(b), 100);
  ASSERT_EQ(b.parts_size(), 4);
  EXPECT_EQ(b.parts(0).cause(), v1::TIME_CAUSE_COMPUTE);
  EXPECT_EQ(b.parts(0).ns(), 60);
  EXPECT_EQ(PartNs(b.parts(), v1::TIME_CAUSE_COPY), 10);
  EXPECT_EQ(PartNs(b.parts(), v1::TIME_CAUSE_SYNC), 20);
  EXPECT_EQ(PartNs(b.parts(), v1::TIME_CAUSE_HOST), 10);
  EXPECT_EQ(PartNs(b.parts(), v1::TIME_CAUSE_UNEXPLAINED), 0);  // absent
}

TEST(TimeParts, ExposedCommunicationIsSplitInTheRatioOfWaitToTransfer) {
  v1::StepBreakdown b;
  b.set_wall_ns(100);
  b.set_gpu_busy_ns(100);
  b.set_kernel_ns(100);
  b.set_exposed_comm_ns(40);
  b.set_comm_wait_ns(30);      // of all collective time, not only the exposed part
  b.set_comm_transfer_ns(10);
  SetTimeParts(&b);
  EXPECT_EQ(PartNs(b.parts(), v1::TIME_CAUSE_COMPUTE), 60);
  EXPECT_EQ(PartNs(b.parts(), v1::TIME_CAUSE_COMM_WAIT), 30);
  EXPECT_EQ(PartNs(b.parts(), v1::TIME_CAUSE_COMM_TRANSFER), 10);
  EXPECT_EQ(Sum(b), 100);
}

TEST(TimeParts, CommunicationHiddenBehindComputeIsCompute) {
  v1::StepBreakdown b;
  b.set_wall_ns(100);
  b.set_gpu_busy_ns(100);
  b.set_kernel_ns(100);
  b.set_comm_wait_ns(30);  // waits, but compute ran beside them: nothing exposed
  SetTimeParts(&b);
  EXPECT_EQ(PartNs(b.parts(), v1::TIME_CAUSE_COMPUTE), 100);
  EXPECT_EQ(PartNs(b.parts(), v1::TIME_CAUSE_COMM_WAIT), 0);
}

TEST(TimeParts, IdleTheAttributionLeftWithoutACauseIsUnexplainedNotDropped) {
  v1::StepBreakdown b;
  b.set_wall_ns(100);
  b.set_gpu_busy_ns(50);
  b.set_kernel_ns(50);
  b.set_idle_launch_bound_ns(30);
  SetTimeParts(&b);
  EXPECT_EQ(PartNs(b.parts(), v1::TIME_CAUSE_UNEXPLAINED), 20);
  EXPECT_EQ(Sum(b), 100);
}

TEST(TimeParts, SettingThemTwiceReplacesThem) {
  v1::StepBreakdown b;
  b.set_wall_ns(10);
  b.set_gpu_busy_ns(10);
  b.set_kernel_ns(10);
  SetTimeParts(&b);
  SetTimeParts(&b);
  EXPECT_EQ(b.parts_size(), 1);
}

}  // namespace
}  // namespace gpuspy::analysis
