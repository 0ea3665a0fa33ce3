// The CLI's per-step device memory line.
#include "viewer/cli/memory_view.h"

#include <gtest/gtest.h>

namespace gpuspy::cli {
namespace {

TEST(CliMemoryView, SegmentsLineSaysReservedGrowthAndPeak) {
  v1::StepMemory m;
  m.set_source("segments");
  m.set_reserved_end_bytes(3ll << 30);
  m.set_reserved_growth_bytes(64ll << 20);
  m.set_reserved_peak_bytes(4ll << 30);
  EXPECT_EQ(MemoryLine(m),
            "device memory (segments): 3.0 GiB reserved (+64.0 MiB in the step), peak 4.0 GiB reserved");
}

TEST(CliMemoryView, AllocatorLineAddsAllocatedAndShowsShrinking) {
  v1::StepMemory m;
  m.set_source("allocator");
  m.set_reserved_end_bytes(2ll << 30);
  m.set_reserved_growth_bytes(-(512ll << 20));
  m.set_reserved_peak_bytes(3ll << 30);
  m.set_has_allocated(true);
  m.set_allocated_end_bytes(1ll << 30);
  m.set_allocated_growth_bytes(0);
  m.set_allocated_peak_bytes(2ll << 30);
  EXPECT_EQ(MemoryLine(m),
            "device memory (allocator): 2.0 GiB reserved (-512.0 MiB in the step), 1.0 GiB "
            "allocated (+0 B), peak 3.0 GiB reserved / 2.0 GiB allocated");
}

}  // namespace
}  // namespace gpuspy::cli
