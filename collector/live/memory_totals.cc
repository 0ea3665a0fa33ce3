#include "collector/live/memory_totals.h"

#include <algorithm>
#include <vector>

namespace gpuspy::collector {

void MemoryTotals::Totals::Fold(const Record& r) {
  if (r.segment_op) {
    ++segment_ops;
    segment_net_bytes += r.segment_delta_bytes;
  }
  if (r.sample) {
    ++samples;
    // A late record older than the device's latest sample leaves the totals as they are.
    auto it = device_latest_ns.find(r.device);
    if (it == device_latest_ns.end() || it->second <= r.timestamp_ns) {
      device_latest_ns[r.device] = r.timestamp_ns;
      device_latest[r.device] = {r.reserved_bytes, r.allocated_bytes};
    }
  }
}

void MemoryTotals::Add(uint64_t process_id, const EventColumns& events, bool from_start) {
  std::vector<const MemoryEvent*> segments;
  for (const MemoryEvent& m : events.memory) {
    // The same events MeasureWindowMemory counts (memory_usage.cc): device segments only.
    if (m.memory_kind == MemoryKind::kDevice &&
        (m.op == MemoryOpKind::kAlloc || m.op == MemoryOpKind::kFree)) {
      segments.push_back(&m);
    }
  }
  std::stable_sort(segments.begin(), segments.end(), [](const MemoryEvent* a, const MemoryEvent* b) {
    return a->timestamp_ns < b->timestamp_ns;
  });
  std::lock_guard lock(mu_);
  Process& p = processes_[process_id];
  if (from_start) p.complete = true;
  std::vector<Record> add;
  for (const MemoryEvent* m : segments) {
    Record r;
    r.timestamp_ns = m->timestamp_ns;
    r.segment_op = true;
    if (m->op == MemoryOpKind::kAlloc) {
      r.segment_delta_bytes = static_cast<int64_t>(m->bytes);
      p.live_segments[m->address] = m->bytes;
    } else {
      uint64_t bytes = m->bytes;
      auto it = p.live_segments.find(m->address);
      if (it != p.live_segments.end()) {
        if (bytes == 0) bytes = it->second;
        p.live_segments.erase(it);
      }
      r.segment_delta_bytes = -static_cast<int64_t>(bytes);
    }
    add.push_back(r);
  }
  for (const MemoryPoolEvent& s : events.memory_pools) {
    if (s.op != PoolOpKind::kUsage) continue;
    Record r;
    r.timestamp_ns = s.timestamp_ns;
    r.sample = true;
    r.device = s.device_id;
    r.reserved_bytes = static_cast<int64_t>(s.size);
    r.allocated_bytes = static_cast<int64_t>(s.utilized_bytes);
    add.push_back(r);
  }
  for (const Record& r : add) {
    if (r.timestamp_ns < p.folded_up_to_ns) {
      p.base.Fold(r);  // a late batch: sums stay exact, a sample older than the latest is kept out
      continue;
    }
    // Batches arrive nearly in order: the insertion point is at or near the end.
    auto at = std::upper_bound(p.records.begin(), p.records.end(), r.timestamp_ns,
                               [](int64_t t, const Record& x) { return t < x.timestamp_ns; });
    p.records.insert(at, r);
  }
  while (p.records.size() > kKeptRecords) {
    p.base.Fold(p.records.front());
    p.folded_up_to_ns = p.records.front().timestamp_ns + 1;
    p.records.pop_front();
  }
}

std::optional<analysis::WindowMemory> MemoryTotals::Before(uint64_t process_id, int64_t to_ns) const {
  Totals t;
  {
    std::lock_guard lock(mu_);
    auto it = processes_.find(process_id);
    if (it == processes_.end() || !it->second.complete || to_ns < it->second.folded_up_to_ns) {
      return std::nullopt;
    }
    const Process& p = it->second;
    t = p.base;
    for (const Record& r : p.records) {
      if (r.timestamp_ns >= to_ns) break;
      t.Fold(r);
    }
  }
  analysis::WindowMemory out;
  out.segment_ops = t.segment_ops;
  out.segment_net_bytes = t.segment_net_bytes;
  out.segment_peak_rise_bytes = std::max<int64_t>(0, t.segment_net_bytes);
  out.samples = t.samples;
  if (t.samples > 0) {
    int64_t reserved = 0, allocated = 0;
    for (const auto& [device, totals] : t.device_latest) {
      reserved += totals.first;
      allocated += totals.second;
    }
    out.reserved_first_bytes = out.reserved_last_bytes = out.reserved_peak_bytes = reserved;
    out.allocated_first_bytes = out.allocated_last_bytes = out.allocated_peak_bytes = allocated;
  }
  return out;
}

void MemoryTotals::Forget(uint64_t process_id) {
  std::lock_guard lock(mu_);
  processes_.erase(process_id);
}

void MemoryTotals::ForgetUnless(const std::function<bool(uint64_t process_id)>& keep) {
  std::lock_guard lock(mu_);
  absl::erase_if(processes_, [&](const auto& entry) { return !keep(entry.first); });
}

size_t MemoryTotals::process_count() const {
  std::lock_guard lock(mu_);
  return processes_.size();
}

}  // namespace gpuspy::collector
