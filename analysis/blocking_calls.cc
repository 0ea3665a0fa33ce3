#include "analysis/blocking_calls.h"

#include <algorithm>

#include "analysis/api_classifier.h"

namespace gpuspy::analysis {
namespace {

bool Touches(int64_t start, int64_t end, Interval w) { return end > w.start_ns && start < w.end_ns; }

Interval Clip(int64_t start, int64_t end, Interval w) {
  return {std::max(start, w.start_ns), std::min(end, w.end_ns)};
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
  for (const ApiEvent& a : ev.apis) {
    if (!Touches(a.start_ns, a.end_ns, w)) continue;
    const std::string_view name = strings.Get(a.name);
    if (!IsBlockingApi(name) && !blocking_copies.contains(a.correlation_id)) continue;
    BlockingCall c;
    c.api = &a;
    c.span = Clip(a.start_ns, a.end_ns, w);
    c.allocator = IsFreeApi(name);
    out.push_back(c);
  }
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
