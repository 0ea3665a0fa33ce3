#include "analysis/nvtx_rows.h"

#include <algorithm>
#include <numeric>

namespace gpuspy::analysis {

std::vector<uint32_t> NvtxRows(std::span<const NvtxRangeEvent> ranges) {
  std::vector<uint32_t> row(ranges.size(), 0);
  std::vector<size_t> order(ranges.size());
  std::iota(order.begin(), order.end(), 0);
  // By thread, then start; an enclosing range (longer) before what it encloses.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const NvtxRangeEvent &x = ranges[a], &y = ranges[b];
    if (x.thread_id != y.thread_id) return x.thread_id < y.thread_id;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    if (x.end_ns != y.end_ns) return x.end_ns > y.end_ns;
    return a < b;
  });
  // Per thread, the ends of the ranges still open at the current start: a range's row is how
  // many are open. Only the top is popped, so a range that outlives its parent keeps the
  // parent's row taken until it ends too: overlapping ranges never share a row.
  std::vector<int64_t> open;
  uint32_t thread = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const NvtxRangeEvent& r = ranges[order[k]];
    if (k == 0 || r.thread_id != thread) {
      open.clear();
      thread = r.thread_id;
    }
    while (!open.empty() && open.back() <= r.start_ns) open.pop_back();
    row[order[k]] = static_cast<uint32_t>(open.size());
    open.push_back(r.end_ns);
  }
  return row;
}

}  // namespace gpuspy::analysis
