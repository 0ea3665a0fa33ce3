// Host calls that wait for the GPU, found once and used by both the breakdown and the
// sync-stall detector so the two always agree.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analysis/intervals.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

struct BlockingCall {
  const ApiEvent* api = nullptr;  // null when found from a SYNCHRONIZATION record alone
  Interval span;                  // clipped to the window
  SyncKind sync_kind = SyncKind::kUnknown;
  // cudaFree/cuMemFree, or the sync right before them: blocking, but alloc_churn's business.
  bool allocator = false;
};

// The allocator's own host work between two of its calls (the caching allocator walking its
// free list between two cudaFree calls of torch.cuda.empty_cache()) is at most this long; a sync
// this close before a cudaFree on its thread, with no call between, is the allocator's too:
// empty_cache() synchronizes (its events, or the user's synchronize() just before it) before it
// gives its segments back, and without the empty_cache() there is no sync either.
inline constexpr int64_t kMaxAllocatorBookkeepingNs = 50'000;

// A copy to or from pageable host memory: CUDA stages it through a pinned buffer, synchronously
// for the host whatever the call asked for.
inline bool IsPageableCopy(const MemcpyEvent& m) {
  return m.src_kind == MemoryKind::kPageable || m.dst_kind == MemoryKind::kPageable;
}

// API calls overlapping `window` that block the host: by name (IsBlockingApi), and copy calls
// whose copy is synchronous or touches pageable host memory (cudaMemcpyAsync to pageable memory
// is synchronous). When no API records exist (API tracing off), SYNCHRONIZATION records other
// than cudaStreamWaitEvent stand in.
std::vector<BlockingCall> FindBlockingCalls(const EventColumns& events, const StringTable& strings,
                                            Interval window);

// Whether the step's syncs are a pattern worth the name: the host blocked (outside allocator
// calls, alloc_churn's) for at least kMinBlockedShare of the window, or in at least
// kManyBlockingCalls calls. Only then is the drain after them theirs (idle_attribution.h) and
// sync_stall a verdict: one light .item() followed by host work says the host work is slow,
// not the sync (the host was barely ahead of the GPU when it waited).
inline constexpr double kMinBlockedShare = 0.10;
inline constexpr size_t kManyBlockingCalls = 10;
bool SyncsMatter(const std::vector<BlockingCall>& calls, Interval window);

}  // namespace gpuspy::analysis
