// MemoryTotals (collector/live/memory_totals.h): what ingest keeps of each process's device
// memory events adds up, before any time, to what MemoryLevels needs of everything before a
// stretch, the same as measuring those events from the stored batches.
#include "collector/live/memory_totals.h"

#include <gtest/gtest.h>

#include <limits>
#include <thread>

#include "analysis/memory_usage.h"

namespace gpuspy::collector {
namespace {

MemoryEvent Segment(int64_t t, MemoryOpKind op, uint64_t address, uint64_t bytes) {
  return {t, 0, {}, op, MemoryKind::kDevice, false, address, bytes};
}

MemoryPoolEvent Sample(int64_t t, uint32_t device, uint64_t reserved, uint64_t allocated) {
  MemoryPoolEvent p;
  p.timestamp_ns = t;
  p.device_id = device;
  p.op = PoolOpKind::kUsage;
  p.size = reserved;
  p.utilized_bytes = allocated;
  return p;
}

TEST(MemoryTotals, BeforeATimeAddsUpEveryEarlierBatchLikeMeasuringThem) {
  EventColumns first, second;
  first.memory.push_back(Segment(100, MemoryOpKind::kAlloc, 0x1, 1000));
  first.memory.push_back(Segment(200, MemoryOpKind::kAlloc, 0x2, 500));
  // Pinned host memory does not count (memory_usage.cc).
  first.memory.push_back({250, 0, {}, MemoryOpKind::kAlloc, MemoryKind::kPinned, false, 0x9, 7});
  first.memory_pools.push_back(Sample(150, 0, 4000, 1000));
  // A free without its size takes the allocation's, from an earlier batch.
  second.memory.push_back(Segment(300, MemoryOpKind::kFree, 0x2, 0));
  second.memory.push_back(Segment(400, MemoryOpKind::kAlloc, 0x3, 64));
  second.memory_pools.push_back(Sample(350, 0, 4500, 1200));
  MemoryTotals totals;
  totals.Add(7, first, /*from_start=*/true);
  totals.Add(7, second, /*from_start=*/false);

  std::optional<analysis::WindowMemory> at_300 = totals.Before(7, 300);
  ASSERT_TRUE(at_300.has_value());
  EXPECT_EQ(at_300->segment_ops, 2u);
  EXPECT_EQ(at_300->segment_net_bytes, 1500);
  EXPECT_EQ(at_300->samples, 1u);
  EXPECT_EQ(at_300->reserved_last_bytes, 4000);
  EXPECT_EQ(at_300->allocated_last_bytes, 1000);

  std::optional<analysis::WindowMemory> at_end = totals.Before(7, 1000);
  ASSERT_TRUE(at_end.has_value());
  EXPECT_EQ(at_end->segment_ops, 4u);
  EXPECT_EQ(at_end->segment_net_bytes, 1000 + 64);
  EXPECT_EQ(at_end->reserved_last_bytes, 4500);

  // The levels they give a step are those of the same events measured in one window.
  EventColumns all = first;
  all.memory.insert(all.memory.end(), second.memory.begin(), second.memory.end());
  all.memory_pools.insert(all.memory_pools.end(), second.memory_pools.begin(), second.memory_pools.end());
  const analysis::WindowMemory measured =
      analysis::MeasureWindowMemory(all, StringTable(), std::numeric_limits<int64_t>::min(), 1000);
  const auto from_totals = analysis::MemoryLevels({{*at_end, {}}});
  const auto from_measure = analysis::MemoryLevels({{measured, {}}});
  ASSERT_TRUE(from_totals[0].has_value() && from_measure[0].has_value());
  EXPECT_EQ(from_totals[0]->DebugString(), from_measure[0]->DebugString());
}

TEST(MemoryTotals, SamplesOfSeveralDevicesAreSummedAndALateOneDoesNotReplaceANewerOne) {
  MemoryTotals totals;
  EventColumns a;
  a.memory_pools.push_back(Sample(100, 0, 10, 1));
  a.memory_pools.push_back(Sample(110, 1, 20, 2));
  a.memory_pools.push_back(Sample(200, 0, 30, 3));
  totals.Add(1, a, true);
  EventColumns late;
  late.memory_pools.push_back(Sample(150, 0, 99, 9));  // before device 0's sample at 200
  totals.Add(1, late, false);
  std::optional<analysis::WindowMemory> m = totals.Before(1, 1000);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->samples, 4u);
  EXPECT_EQ(m->reserved_last_bytes, 30 + 20);
  EXPECT_EQ(m->allocated_last_bytes, 3 + 2);
  // Before 160 the late sample is device 0's latest.
  EXPECT_EQ(totals.Before(1, 160)->reserved_last_bytes, 99 + 20);
}

TEST(MemoryTotals, AProcessFirstSeenMidStreamOrAskedBeforeWhatWasFoldedHasNoAnswer) {
  MemoryTotals totals;
  EventColumns one;
  one.memory.push_back(Segment(10, MemoryOpKind::kAlloc, 0x1, 8));
  // gpuspyd restarted on a store with the process's earlier batches: they were never added.
  totals.Add(1, one, /*from_start=*/false);
  EXPECT_FALSE(totals.Before(1, 100).has_value());
  EXPECT_FALSE(totals.Before(2, 100).has_value());  // never seen

  EventColumns many;
  for (size_t i = 0; i < MemoryTotals::kKeptRecords + 10; ++i) {
    many.memory.push_back(Segment(1000 + static_cast<int64_t>(i), MemoryOpKind::kAlloc, 0x100 + i, 1));
  }
  totals.Add(3, many, true);
  EXPECT_FALSE(totals.Before(3, 1005).has_value()) << "inside the folded part";
  std::optional<analysis::WindowMemory> after = totals.Before(3, 1'000'000);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->segment_ops, MemoryTotals::kKeptRecords + 10);
  EXPECT_EQ(after->segment_net_bytes, static_cast<int64_t>(MemoryTotals::kKeptRecords + 10));
}

// Ingest streams add while queries read (the CI's ThreadSanitizer stage runs this).
TEST(MemoryTotals, StreamsAddingWhileQueriesReadSeeWholeBatches) {
  MemoryTotals totals;
  constexpr int kBatches = 2000;
  std::thread reader([&] {
    for (int i = 0; i < kBatches; ++i) {
      std::optional<analysis::WindowMemory> m = totals.Before(1, std::numeric_limits<int64_t>::max());
      // A batch is an alloc and its free: whatever was added so far nets to zero.
      if (m.has_value()) {
        ASSERT_EQ(m->segment_net_bytes, 0);
      }
    }
  });
  std::thread other([&] {
    for (int i = 0; i < kBatches; ++i) {
      EventColumns b;
      b.memory_pools.push_back(Sample(i, 0, static_cast<uint64_t>(i), 0));
      totals.Add(2, b, i == 0);
    }
  });
  for (int i = 0; i < kBatches; ++i) {
    EventColumns b;
    b.memory.push_back(Segment(2 * i, MemoryOpKind::kAlloc, 0x10 + i, 100));
    b.memory.push_back(Segment(2 * i + 1, MemoryOpKind::kFree, 0x10 + i, 0));
    totals.Add(1, b, i == 0);
  }
  reader.join();
  other.join();
  EXPECT_EQ(totals.Before(1, std::numeric_limits<int64_t>::max())->segment_ops, 2u * kBatches);
  EXPECT_EQ(totals.Before(2, std::numeric_limits<int64_t>::max())->reserved_last_bytes, kBatches - 1);
}

TEST(MemoryTotals, ForgetUnlessDropsExactlyTheProcessesRefused) {
  MemoryTotals totals;
  for (uint64_t id = 1; id <= 4; ++id) {
    EventColumns b;
    b.memory.push_back(Segment(10, MemoryOpKind::kAlloc, 0x1, 100));
    totals.Add(id, b, /*from_start=*/true);
  }
  totals.ForgetUnless([](uint64_t id) { return id % 2 == 0; });
  EXPECT_EQ(totals.process_count(), 2u);
  EXPECT_FALSE(totals.Before(1, 100).has_value());
  EXPECT_FALSE(totals.Before(3, 100).has_value());
  EXPECT_EQ(totals.Before(2, 100)->segment_net_bytes, 100);
  EXPECT_EQ(totals.Before(4, 100)->segment_net_bytes, 100);
}

}  // namespace
}  // namespace gpuspy::collector
