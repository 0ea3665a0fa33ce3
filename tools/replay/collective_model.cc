#include "tools/replay/collective_model.h"

#include <algorithm>
#include <cmath>

namespace gpuspy::synthetic {

int64_t AllReduceTransferNs(uint64_t bytes, int ranks, const BusModel& bus,
                            int64_t extra_latency_ns) {
  const int64_t latency = bus.latency_ns + extra_latency_ns;
  if (ranks <= 1) return latency;
  // GB/s = bytes per ns.
  const double alg_bytes_per_ns = bus.bus_gb_per_s * ranks / (2.0 * (ranks - 1));
  return latency + static_cast<int64_t>(std::llround(static_cast<double>(bytes) / alg_bytes_per_ns));
}

int64_t CollectiveEndNs(const std::vector<int64_t>& arrivals_ns, int64_t transfer_ns) {
  if (arrivals_ns.empty()) return 0;
  return *std::max_element(arrivals_ns.begin(), arrivals_ns.end()) + transfer_ns;
}

}  // namespace gpuspy::synthetic
