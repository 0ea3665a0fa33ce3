// NVTX rows (analysis/nvtx_rows.h): nested ranges recorded with depth 0 (a profiler's
// annotations) get a row each by nesting; overlapping ranges never share a row; threads apart.
#include "analysis/nvtx_rows.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpuspy::analysis {
namespace {

NvtxRangeEvent Range(int64_t start, int64_t end, uint32_t tid = 1) { return {start, end, 0, 0, tid, 0}; }

TEST(NvtxRows, NestedRangesRecordedAtDepthZeroGetOneRowPerLevel) {
  // ProfilerStep#5 [0, 100) holds zero_grad [0, 10) and DDP.forward [10, 60), which holds a
  // module [20, 30); all recorded at depth 0.
  const std::vector<NvtxRangeEvent> r = {Range(10, 60), Range(0, 100), Range(20, 30), Range(0, 10)};
  EXPECT_EQ(NvtxRows(r), (std::vector<uint32_t>{1, 0, 2, 1}));
}

TEST(NvtxRows, OverlappingRangesNeverShareARow) {
  // B starts inside A and outlives it; C starts after A ended but while B runs.
  const std::vector<NvtxRangeEvent> r = {Range(0, 50), Range(40, 90), Range(60, 70), Range(95, 99)};
  const std::vector<uint32_t> rows = NvtxRows(r);
  EXPECT_EQ(rows[0], 0u);
  EXPECT_EQ(rows[1], 1u);
  EXPECT_NE(rows[2], rows[1]);
  EXPECT_EQ(rows[3], 0u);  // after everything ended: back to the top row
}

TEST(NvtxRows, ThreadsAreNestedApart) {
  const std::vector<NvtxRangeEvent> r = {Range(0, 100, 1), Range(10, 20, 2), Range(10, 20, 1)};
  EXPECT_EQ(NvtxRows(r), (std::vector<uint32_t>{0, 0, 1}));
}

}  // namespace
}  // namespace gpuspy::analysis
