// cuda_api_bound: the GPU idle while the host is inside CUDA calls with nothing on the GPU to
// wait for (idle_attribution.h, cuda_call): what the driver did, start-up or not, and where.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/detectors/detectors.h"
#include "tests/unit/detectors/detector_test_steps.h"

namespace gpuspy::analysis {
namespace {

using testing::DetectorStep;
using testing::Evidence;
using ::testing::HasSubstr;
using ::testing::Not;
constexpr int64_t us = 1'000;
constexpr int64_t ms = 1'000'000;

// 1000 µs: GPU work [0,300), the host in `call` for `call_us` after it, then GPU work to the end.
DetectorStep HostInCall(const std::string& call, int64_t call_us, const std::string& site = "") {
  DetectorStep s;
  s.Call("cudaLaunchKernel", 0, 5 * us);
  s.Then(testing::kTcGemm, 300 * us);
  s.Idle(call_us * us + 10 * us);
  s.Call(call, 305 * us, 305 * us + call_us * us, site);
  const int64_t resume = 300 * us + call_us * us + 10 * us;
  s.Call("cudaLaunchKernel", resume - 5 * us, resume);
  s.Then(testing::kTcGemm, 1'000 * us - resume);
  return s;
}

TEST(CudaApiBound, AQueryThatCreatesTheContextIsStartUpNotTheHost) {
  // The alexnet trace's first real CUDA call: a query that takes the context's creation.
  DetectorStep s;
  s.Call("cudaDeviceGetStreamPriorityRange", 0, 30 * ms, "train.py:12 <module>");
  s.Idle(30 * ms);
  s.Call("cudaLaunchKernel", 30 * ms, 30 * ms + 5 * us);
  s.Then(testing::kTcGemm, 1 * ms);
  const auto f = s.Run(&DetectCudaApiBound);
  ASSERT_TRUE(f.has_value());
  const auto& b = s.report().breakdown();
  EXPECT_EQ(b.idle_cuda_call_ns(), 30 * ms);
  EXPECT_EQ(b.idle_host_other_ns() + b.idle_input_ns() + b.idle_sync_blocked_ns(), 0);
  EXPECT_EQ(f->lost_ns(), 30 * ms);
  EXPECT_THAT(f->title(), HasSubstr("CUDA start-up"));
  EXPECT_THAT(f->title(), HasSubstr("cudaDeviceGetStreamPriorityRange (CUDA context"));
  EXPECT_THAT(Evidence(*f, "call_site"), HasSubstr("train.py:12"));
  EXPECT_THAT(f->fix_hint(), HasSubstr("once per process"));
}

TEST(CudaApiBound, StreamCreationEveryStepIsNotStartUp) {
  const auto f = HostInCall("cudaStreamCreateWithFlags", 200, "train.py:30 step").Run(&DetectCudaApiBound);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 200 * us);
  EXPECT_THAT(f->title(), Not(HasSubstr("start-up")));
  EXPECT_THAT(Evidence(*f, "cuda_call"), HasSubstr("cudaStreamCreateWithFlags x1 = 200.0 us (stream"));
  EXPECT_THAT(f->fix_hint(), HasSubstr("train.py:30 step is where it is called: create streams"));
}

TEST(CudaApiBound, JustUnderTheShareDoesNotFire) {
  // kMinCudaCallShare = 10 % of 1000 µs: 99 µs of driver work misses (and is below
  // kMinDriverCallNs: host time), 100 µs fires.
  EXPECT_FALSE(HostInCall("cudaMalloc", 99).Run(&DetectCudaApiBound).has_value());
  EXPECT_TRUE(HostInCall("cudaMalloc", 100).Run(&DetectCudaApiBound).has_value());
}

TEST(CudaApiBound, ALaunchOfAMillisecondLoadsItsModule) {
  // A launch is microseconds: one that takes 2 ms loads its kernel's module (lazy loading).
  const auto f = HostInCall("cudaLaunchKernel", 2'000).Run(&DetectCudaApiBound);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->title(), HasSubstr("module loading"));
  // Half a millisecond is still launch latency, the launch storm's.
  DetectorStep slow = HostInCall("cudaLaunchKernel", 500);
  EXPECT_FALSE(slow.Run(&DetectCudaApiBound).has_value());
  EXPECT_GT(slow.report().breakdown().idle_launch_bound_ns(), 450 * us);
}

// GPU work to 300 us, a 400 us gap, GPU work to 1000 us; pinned memory allocated for 280 us in
// the gap, by the launching thread or by another one.
DetectorStep PinnedAllocInTheGap(bool on_launching_thread) {
  DetectorStep s;
  s.Call("cudaLaunchKernel", 0, 5 * us);
  s.Then(testing::kTcGemm, 300 * us);
  s.Idle(400 * us);
  if (on_launching_thread) {
    s.Call("cudaHostAlloc", 310 * us, 590 * us);
  } else {
    s.CallOnThread("cudaHostAlloc", 310 * us, 590 * us, /*thread_id=*/99);
  }
  s.Call("cudaLaunchKernel", 695 * us, 700 * us);
  s.Then(testing::kTcGemm, 300 * us);
  return s;
}

TEST(CudaApiBound, ASideThreadInTheDriverIsNotWhyTheGpuWaits) {
  // A pin-memory thread allocating while the launching thread runs Python: host time.
  DetectorStep side = PinnedAllocInTheGap(false);
  EXPECT_FALSE(side.Run(&DetectCudaApiBound).has_value());
  EXPECT_EQ(side.report().breakdown().idle_cuda_call_ns(), 0);
  // The same call on the launching thread is why the GPU waits.
  DetectorStep main = PinnedAllocInTheGap(true);
  const auto f = main.Run(&DetectCudaApiBound);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 280 * us);
}

TEST(CudaApiBound, AllocationThatReachesTheDriverPointsAtTheCachingAllocator) {
  const auto f = HostInCall("cudaMalloc", 300).Run(&DetectCudaApiBound);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->fix_hint(), HasSubstr("caching allocators"));
}

}  // namespace
}  // namespace gpuspy::analysis
