#include "analysis/blocking_calls.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "analysis/api_classifier.h"
#include "analysis/api_name_memo.h"

namespace gpuspy::analysis {
namespace {

bool Touches(int64_t start, int64_t end, Interval w) { return end > w.start_ns && start < w.end_ns; }

Interval Clip(int64_t start, int64_t end, Interval w) {
  return {std::max(start, w.start_ns), std::min(end, w.end_ns)};
}

// Marks the syncs that belong to a release of the allocator's segments (kMaxAllocatorBookkeepingNs):
// the next call on the sync's thread frees device memory, within that much of the sync's end.
void MarkAllocatorSyncs(const EventColumns& ev, const StringTable& strings, Interval w,
                        std::vector<BlockingCall>* calls) {
  bool any_free = false;
  for (const BlockingCall& c : *calls) any_free = any_free || c.allocator;
  if (!any_free) return;
  // Each thread's calls near the window, by start: a sync's next call.
  absl::flat_hash_map<uint32_t, std::vector<const ApiEvent*>> by_thread;
  for (const ApiEvent& a : ev.apis) {
    if (Touches(a.start_ns, a.end_ns + kMaxAllocatorBookkeepingNs, w)) by_thread[a.thread_id].push_back(&a);
  }
  for (auto& [tid, v] : by_thread) {
    std::sort(v.begin(), v.end(), [](const ApiEvent* a, const ApiEvent* b) { return a->start_ns < b->start_ns; });
  }
  for (BlockingCall& c : *calls) {
    if (c.allocator || c.api == nullptr) continue;
    const std::vector<const ApiEvent*>& v = by_thread[c.api->thread_id];
    // The first call starting after the sync ended (calls nested in it start before its end).
    auto next = std::upper_bound(v.begin(), v.end(), c.api->end_ns - 1,
                                 [](int64_t t, const ApiEvent* a) { return t < a->start_ns; });
    if (next == v.end() || (*next)->start_ns - c.api->end_ns > kMaxAllocatorBookkeepingNs) continue;
    c.allocator = IsFreeApi(strings.Get((*next)->name));
  }
}

}  // namespace

std::vector<BlockingCall> FindBlockingCalls(const EventColumns& ev, const StringTable& strings,
                                            Interval w) {
  absl::flat_hash_set<uint64_t> blocking_copies;
  for (const MemcpyEvent& m : ev.memcpys) {
    if (!Touches(m.start_ns, m.end_ns, w)) continue;
    if (!m.async || (IsPageableCopy(m) && m.copy_kind != CopyKind::kDtoD)) {
      blocking_copies.insert(m.correlation_id);
    }
  }
  std::vector<BlockingCall> out;
  ApiNameMemo is_blocking(strings, IsBlockingApi);
  for (const ApiEvent& a : ev.apis) {
    if (!Touches(a.start_ns, a.end_ns, w)) continue;
    if (!is_blocking(a.name) && !blocking_copies.contains(a.correlation_id)) continue;
    BlockingCall c;
    c.api = &a;
    c.span = Clip(a.start_ns, a.end_ns, w);
    c.allocator = IsFreeApi(strings.Get(a.name));
    out.push_back(c);
  }
  MarkAllocatorSyncs(ev, strings, w, &out);
  if (!out.empty() || !ev.apis.empty()) return out;
  for (const SyncEvent& y : ev.syncs) {
    if (!Touches(y.start_ns, y.end_ns, w) || y.sync_kind == SyncKind::kStreamWaitEvent) continue;
    BlockingCall c;
    c.span = Clip(y.start_ns, y.end_ns, w);
    c.sync_kind = y.sync_kind;
    out.push_back(c);
  }
  return out;
}

bool SyncsMatter(const std::vector<BlockingCall>& calls, Interval w) {
  std::vector<Interval> blocked;
  for (const BlockingCall& c : calls) {
    if (!c.allocator) blocked.push_back(c.span);
  }
  if (blocked.size() >= kManyBlockingCalls) return true;
  const int64_t blocked_ns = IntervalSet::Union(std::move(blocked)).Clip(w).TotalLength();
  return w.length() > 0 && static_cast<double>(blocked_ns) >= kMinBlockedShare * static_cast<double>(w.length());
}

}  // namespace gpuspy::analysis
