// The physics of a synchronous collective (NCCL all-reduce) across the ranks of a job: each
// rank's kernel starts when that rank arrives (its host launched it and its inputs are ready),
// spins until the last rank is there, then the data moves; so every rank's kernel ENDS at about
// the same time, and early ranks' kernels are longer by exactly their wait.
#pragma once

#include <cstdint>
#include <vector>

namespace gpuspy::synthetic {

// NCCL's busBw (nccl-tests' convention): what the slowest link carries, comparable across world
// sizes. An all-reduce moves 2(n-1)/n of the message through each rank, so the time to reduce
// `bytes` is bytes / algBw with algBw = busBw * n / (2(n-1)).
struct BusModel {
  double bus_gb_per_s = 100.0;  // NVLink / fast-fabric class
  int64_t latency_ns = 25'000;  // a ring collective's fixed cost (LL protocol handshakes)
};

// Time an all-reduce of `bytes` per rank takes across `ranks` once everyone has arrived:
// latency plus the bytes at algBw. One rank: only the latency (nothing to exchange).
int64_t AllReduceTransferNs(uint64_t bytes, int ranks, const BusModel& bus,
                            int64_t extra_latency_ns = 0);

// When the collective ends: the last arrival plus the transfer.
int64_t CollectiveEndNs(const std::vector<int64_t>& arrivals_ns, int64_t transfer_ns);

}  // namespace gpuspy::synthetic
