// alloc_churn: at least kMinAllocatorCalls (10) cudaMalloc/cudaFree calls, or kMinMemoryOps (20)
// allocation/free records, in one step; only allocator time that leaves the GPU idle is lost.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/api_classifier.h"
#include "analysis/detectors/detectors.h"
#include "tests/unit/detectors/detector_test_steps.h"

namespace gpuspy::analysis {
namespace {

using testing::DetectorStep;
using testing::Evidence;
using ::testing::HasSubstr;
constexpr int64_t us = 1'000;

// 1000 µs of compute, then `calls` allocator calls of 10 µs each with the GPU idle meanwhile.
DetectorStep AllocatorCalls(int calls) {
  DetectorStep s;
  s.Then(testing::kTcGemm, 1'000 * us);
  for (int i = 0; i < calls; ++i) {
    const int64_t t = 1'000 * us + i * 10 * us;
    s.Call(i % 2 == 0 ? "cudaMalloc" : "cudaFree", t, t + 10 * us);
  }
  s.Idle(calls * 10 * us);
  return s;
}

// 1000 µs of compute with `ops` allocation/free records and no allocator call traced.
DetectorStep MemoryRecords(int ops) {
  DetectorStep s;
  s.Then(testing::kTcGemm, 1'000 * us);
  for (int i = 0; i < ops; ++i) {
    s.Memory(i % 2 == 0 ? MemoryOpKind::kAlloc : MemoryOpKind::kFree, (10 + i * 10) * us, 1 << 20);
  }
  return s;
}

TEST(AllocChurn, AnAllocationAsLongAsAContextCreationIsStartUpNotChurn) {
  DetectorStep s = AllocatorCalls(12);
  s.Call("cudaMalloc", 1'120 * us, 1'120 * us + kContextCreationNs);  // the allocator's first segment
  s.Idle(kContextCreationNs);
  const auto f = s.Run(&DetectAllocChurn);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 120 * us);  // the twelve short calls only: the long one is cuda_api_bound's
  EXPECT_EQ(s.report().primary_bottleneck(), v1::cuda_api_bound);
}

TEST(AllocChurn, AllocatorCallsThatIdleTheGpuFire) {
  DetectorStep s = AllocatorCalls(12);
  const auto f = s.Run(&DetectAllocChurn);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->detector(), v1::alloc_churn);
  EXPECT_EQ(f->lost_ns(), 120 * us);
  EXPECT_EQ(Evidence(*f, "allocator_calls"), "12 = 0.1 ms");
  EXPECT_THAT(f->fix_hint(), HasSubstr("empty_cache"));
}

TEST(AllocChurn, TheTitleCountsTheCallsTheEvidenceLists) {
  // 12 calls (6 cudaMalloc, 6 cudaFree) but 12 allocation and 12 free records: the records may
  // not match the calls one for one, so the title counts the calls, as the `api` evidence does.
  DetectorStep s = AllocatorCalls(12);
  for (int i = 0; i < 24; ++i) {
    s.Memory(i % 2 == 0 ? MemoryOpKind::kAlloc : MemoryOpKind::kFree, 1'000 * us + i * 5 * us, 1 << 20);
  }
  const auto f = s.Run(&DetectAllocChurn);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->title(), HasSubstr("6 allocation calls and 6 free calls in one step"));
  EXPECT_EQ(Evidence(*f, "api"), "cudaFree x6");
  EXPECT_EQ(Evidence(*f, "memory_records"), "12 allocations, 12 frees (the driver's records)");
}

TEST(AllocChurn, ACallAsLongAsAContextCreationIsStillCounted) {
  DetectorStep s = AllocatorCalls(12);
  s.Call("cudaMalloc", 1'120 * us, 1'120 * us + kContextCreationNs);
  s.Idle(kContextCreationNs);
  const auto f = s.Run(&DetectAllocChurn);
  ASSERT_TRUE(f.has_value());
  EXPECT_THAT(f->title(), HasSubstr("7 allocation calls and 6 free calls"));
}

TEST(AllocChurn, TheLineThatCallsTheAllocatorIsNamed) {
  DetectorStep s;
  s.Then(testing::kTcGemm, 1'000 * us);
  for (int i = 0; i < 12; ++i) {
    const int64_t t = 1'000 * us + i * 10 * us;
    s.Call(i % 2 == 0 ? "cudaMalloc" : "cudaFree", t, t + 10 * us,
           i % 2 == 0 ? "train.py:88 step" : "train.py:91 step");
  }
  s.Idle(120 * us);
  const auto f = s.Run(&DetectAllocChurn);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(Evidence(*f, "call_site"), "train.py:88 step x6 (0.1 ms)");
  EXPECT_THAT(f->fix_hint(), HasSubstr("train.py:88 step calls the allocator 6x in this step"));
}

TEST(AllocChurn, JustUnderTheAllocatorCallCountDoesNotFire) {
  EXPECT_FALSE(AllocatorCalls(9).Run(&DetectAllocChurn).has_value());
  EXPECT_TRUE(AllocatorCalls(10).Run(&DetectAllocChurn).has_value());
}

TEST(AllocChurn, JustUnderTheMemoryRecordCountDoesNotFire) {
  EXPECT_FALSE(MemoryRecords(19).Run(&DetectAllocChurn).has_value());
  const auto f = MemoryRecords(20).Run(&DetectAllocChurn);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->lost_ns(), 0);  // the GPU never idled
  EXPECT_EQ(f->severity(), v1::info);
}

}  // namespace
}  // namespace gpuspy::analysis
