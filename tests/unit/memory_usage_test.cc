// Device memory per step (analysis/memory_usage.h): what a window's memory events say,
// and the absolute levels carried across a process's steps, from cudaMalloc'd segments (MEMORY2)
// and from the caching allocator's totals (Kineto [memory] samples).
#include "analysis/memory_usage.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace gpuspy::analysis {
namespace {

constexpr int64_t kMiB = 1ll << 20;

class MemoryUsage : public ::testing::Test {
 protected:
  void Alloc(int64_t t, uint64_t address, int64_t bytes, const char* site = nullptr,
             MemoryKind kind = MemoryKind::kDevice) {
    const uint64_t corr = next_corr_++;
    ev_.memory.push_back({t, corr, {}, MemoryOpKind::kAlloc, kind, false, address,
                          static_cast<uint64_t>(bytes)});
    ev_.apis.push_back({t - 1, t + 1, corr, ApiDomain::kRuntime, 20, strings_.Intern("cudaMalloc"),
                        1, site ? strings_.Intern(site) : 0});
  }
  void Free(int64_t t, uint64_t address, int64_t bytes) {
    ev_.memory.push_back({t, next_corr_++, {}, MemoryOpKind::kFree, MemoryKind::kDevice, false,
                          address, static_cast<uint64_t>(bytes)});
  }
  void Sample(int64_t t, uint32_t device, int64_t reserved, int64_t allocated) {
    ev_.memory_pools.push_back({t, 0, device, PoolOpKind::kUsage, false, 0,
                                static_cast<uint64_t>(reserved), 0, static_cast<uint64_t>(allocated)});
  }
  WindowMemory Measure(int64_t from, int64_t to) { return MeasureWindowMemory(ev_, strings_, from, to); }

  EventColumns ev_;
  StringTable strings_;
  uint64_t next_corr_ = 1;
};

TEST_F(MemoryUsage, SegmentsNetAndPeakRiseInTimeOrder) {
  Free(300, 0xa, 20 * kMiB);  // out of order on purpose: the window sorts
  Alloc(100, 0xa, 20 * kMiB);
  Alloc(200, 0xb, 30 * kMiB, "train.py:10 buf = torch.empty(...)");
  Alloc(250, 0xc, 1 * kMiB, nullptr, MemoryKind::kPinned);  // host memory: not a device segment
  Alloc(500, 0xd, 99 * kMiB);                                // after the window
  const WindowMemory w = Measure(100, 400);
  EXPECT_EQ(w.segment_ops, 3u);
  EXPECT_EQ(w.segment_net_bytes, 30 * kMiB);
  EXPECT_EQ(w.segment_peak_rise_bytes, 50 * kMiB);
  ASSERT_EQ(w.sites.size(), 1u);  // 0xa was freed; 0xb is live and its call site is known
  EXPECT_EQ(w.sites[0].call_site(), "train.py:10 buf = torch.empty(...)");
  EXPECT_EQ(w.sites[0].bytes(), static_cast<uint64_t>(30 * kMiB));
  EXPECT_EQ(w.sites[0].count(), 1u);
}

TEST_F(MemoryUsage, FreeWithoutSizeTakesItFromItsAllocation) {
  Alloc(100, 0xa, 8 * kMiB);
  Free(200, 0xa, 0);
  const WindowMemory w = Measure(0, 1000);
  EXPECT_EQ(w.segment_net_bytes, 0);
  EXPECT_EQ(w.segment_peak_rise_bytes, 8 * kMiB);
}

TEST_F(MemoryUsage, PiecesAppendedMatchTheWholeStretch) {
  Alloc(100, 0xa, 10 * kMiB);
  Alloc(200, 0xb, 40 * kMiB);
  Free(300, 0xb, 40 * kMiB);
  Alloc(400, 0xc, 5 * kMiB);
  Sample(150, 0, 64 * kMiB, 10 * kMiB);
  Sample(350, 0, 80 * kMiB, 12 * kMiB);
  const WindowMemory whole = Measure(0, 1000);
  WindowMemory pieces = Measure(0, 250);
  AppendStretch(Measure(250, 1000), &pieces);
  EXPECT_EQ(pieces.segment_ops, whole.segment_ops);
  EXPECT_EQ(pieces.segment_net_bytes, whole.segment_net_bytes);
  EXPECT_EQ(pieces.segment_peak_rise_bytes, whole.segment_peak_rise_bytes);
  EXPECT_EQ(pieces.samples, whole.samples);
  EXPECT_EQ(pieces.reserved_first_bytes, 64 * kMiB);
  EXPECT_EQ(pieces.reserved_last_bytes, 80 * kMiB);
  EXPECT_EQ(pieces.allocated_last_bytes, whole.allocated_last_bytes);
}

// Weights cudaMalloc'd at start-up, before the first step, are part of every step's level.
TEST_F(MemoryUsage, LevelsCarryStartUpAndEarlierStepsIntoEachStep) {
  Alloc(10, 0x1, 1024 * kMiB);      // start-up
  Alloc(110, 0x2, 64 * kMiB);       // step 1: +64, a transient 32 on top
  Alloc(120, 0x3, 32 * kMiB);
  Free(130, 0x3, 32 * kMiB);
  Alloc(205, 0x4, 16 * kMiB);       // the gap between steps 1 and 2
  Free(260, 0x2, 64 * kMiB);        // step 2: -64
  std::vector<StepMemoryInput> in(2);
  in[0] = {Measure(std::numeric_limits<int64_t>::min(), 100), Measure(100, 200)};
  in[1] = {Measure(200, 250), Measure(250, 300)};
  const auto levels = MemoryLevels(in);
  ASSERT_EQ(levels.size(), 2u);
  ASSERT_TRUE(levels[0].has_value());
  EXPECT_EQ(levels[0]->source(), "segments");
  EXPECT_EQ(levels[0]->reserved_start_bytes(), 1024 * kMiB);
  EXPECT_EQ(levels[0]->reserved_peak_bytes(), (1024 + 96) * kMiB);
  EXPECT_EQ(levels[0]->reserved_end_bytes(), (1024 + 64) * kMiB);
  EXPECT_EQ(levels[0]->reserved_growth_bytes(), 64 * kMiB);
  EXPECT_FALSE(levels[0]->has_allocated());
  EXPECT_EQ(levels[1]->reserved_start_bytes(), (1024 + 64 + 16) * kMiB);
  EXPECT_EQ(levels[1]->reserved_end_bytes(), (1024 + 16) * kMiB);
  EXPECT_EQ(levels[1]->reserved_peak_bytes(), (1024 + 64 + 16) * kMiB);
  EXPECT_EQ(levels[1]->reserved_growth_bytes(), -64 * kMiB);
}

TEST_F(MemoryUsage, NoMemoryEventsNoLevelsAndFreesOfUnseenSegmentsClampAtZero) {
  std::vector<StepMemoryInput> in(1);
  EXPECT_FALSE(MemoryLevels(in)[0].has_value());
  Free(50, 0x9, 500 * kMiB);  // allocated before the capture began
  Alloc(60, 0xa, 10 * kMiB);
  in[0].step = Measure(0, 100);
  const auto levels = MemoryLevels(in);
  ASSERT_TRUE(levels[0].has_value());
  EXPECT_EQ(levels[0]->reserved_start_bytes(), 0);
  EXPECT_EQ(levels[0]->reserved_end_bytes(), 0);  // -500 + 10 clamped
}

// A step with no memory event of its own still has the level it inherits.
TEST_F(MemoryUsage, AllocatorSamplesGiveReservedAndAllocatedAcrossQuietSteps) {
  Sample(110, 0, 2048 * kMiB, 1000 * kMiB);
  Sample(150, 0, 2048 * kMiB, 1500 * kMiB);
  Sample(190, 0, 2048 * kMiB, 1100 * kMiB);
  Sample(260, 0, 2112 * kMiB, 1164 * kMiB);
  std::vector<StepMemoryInput> in(3);
  in[0].step = Measure(100, 200);
  in[1].step = Measure(200, 250);  // quiet
  in[2].step = Measure(250, 300);
  const auto levels = MemoryLevels(in);
  ASSERT_TRUE(levels[0] && levels[1] && levels[2]);
  EXPECT_EQ(levels[0]->source(), "allocator");
  EXPECT_TRUE(levels[0]->has_allocated());
  EXPECT_EQ(levels[0]->reserved_start_bytes(), 2048 * kMiB);  // the first sample stands in
  EXPECT_EQ(levels[0]->allocated_peak_bytes(), 1500 * kMiB);
  EXPECT_EQ(levels[0]->allocated_end_bytes(), 1100 * kMiB);
  EXPECT_EQ(levels[0]->allocated_growth_bytes(), 100 * kMiB);
  EXPECT_EQ(levels[1]->reserved_end_bytes(), 2048 * kMiB);
  EXPECT_EQ(levels[1]->allocated_end_bytes(), 1100 * kMiB);
  EXPECT_EQ(levels[1]->allocated_growth_bytes(), 0);
  EXPECT_EQ(levels[2]->reserved_growth_bytes(), 64 * kMiB);
  EXPECT_EQ(levels[2]->allocated_growth_bytes(), 64 * kMiB);
}

TEST_F(MemoryUsage, SamplesOfSeveralDevicesAreSummed) {
  Sample(10, 0, 100 * kMiB, 50 * kMiB);
  Sample(20, 1, 300 * kMiB, 70 * kMiB);
  Sample(30, 0, 120 * kMiB, 60 * kMiB);
  const WindowMemory w = Measure(0, 100);
  EXPECT_EQ(w.reserved_first_bytes, 100 * kMiB);
  EXPECT_EQ(w.reserved_last_bytes, 420 * kMiB);
  EXPECT_EQ(w.reserved_peak_bytes, 420 * kMiB);
  EXPECT_EQ(w.allocated_last_bytes, 130 * kMiB);
}

}  // namespace
}  // namespace gpuspy::analysis
