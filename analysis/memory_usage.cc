#include "analysis/memory_usage.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"

namespace gpuspy::analysis {
namespace {

bool InStretch(int64_t t, int64_t from_ns, int64_t to_ns) { return t >= from_ns && t < to_ns; }

// cudaMalloc/cudaFree of device memory: PyTorch's caching allocator segments. Pinned host and
// managed allocations do not take device memory the way a segment does.
bool IsDeviceSegment(const MemoryEvent& m) {
  return m.memory_kind == MemoryKind::kDevice &&
         (m.op == MemoryOpKind::kAlloc || m.op == MemoryOpKind::kFree);
}

void MeasureSegments(const EventColumns& ev, const StringTable& strings, int64_t from_ns,
                     int64_t to_ns, WindowMemory* out) {
  std::vector<const MemoryEvent*> ops;
  for (const MemoryEvent& m : ev.memory) {
    if (IsDeviceSegment(m) && InStretch(m.timestamp_ns, from_ns, to_ns)) ops.push_back(&m);
  }
  if (ops.empty()) return;
  std::stable_sort(ops.begin(), ops.end(), [](const MemoryEvent* a, const MemoryEvent* b) {
    return a->timestamp_ns < b->timestamp_ns;
  });
  // Segments allocated in the stretch and not yet freed, by address: a free record normally
  // carries its size, and one that does not takes it from the allocation.
  absl::flat_hash_map<uint64_t, const MemoryEvent*> live;
  int64_t running = 0;
  for (const MemoryEvent* m : ops) {
    ++out->segment_ops;
    if (m->op == MemoryOpKind::kAlloc) {
      running += static_cast<int64_t>(m->bytes);
      live[m->address] = m;
    } else {
      uint64_t bytes = m->bytes;
      auto it = live.find(m->address);
      if (it != live.end()) {
        if (bytes == 0) bytes = it->second->bytes;
        live.erase(it);
      }
      running -= static_cast<int64_t>(bytes);
    }
    out->segment_peak_rise_bytes = std::max(out->segment_peak_rise_bytes, running);
  }
  out->segment_net_bytes = running;
  if (live.empty()) return;

  // Where the segments still live were asked for: the call site of the API call that made them.
  absl::flat_hash_map<uint64_t, StringRef> site_of;
  for (const ApiEvent& a : ev.apis) {
    if (a.call_site != 0) site_of.try_emplace(a.correlation_id, a.call_site);
  }
  std::map<StringRef, v1::AllocationSite> by_site;
  for (const auto& [address, m] : live) {
    auto it = site_of.find(m->correlation_id);
    if (it == site_of.end()) continue;
    v1::AllocationSite& s = by_site[it->second];
    s.set_bytes(s.bytes() + m->bytes);
    s.set_count(s.count() + 1);
  }
  for (auto& [ref, site] : by_site) {
    site.set_call_site(std::string(strings.Get(ref)));
    out->sites.push_back(std::move(site));
  }
  std::sort(out->sites.begin(), out->sites.end(),
            [](const v1::AllocationSite& a, const v1::AllocationSite& b) {
              return a.bytes() != b.bytes() ? a.bytes() > b.bytes() : a.call_site() < b.call_site();
            });
  if (out->sites.size() > static_cast<size_t>(kMaxAllocationSites)) {
    out->sites.resize(kMaxAllocationSites);
  }
}

void MeasureSamples(const EventColumns& ev, int64_t from_ns, int64_t to_ns, WindowMemory* out) {
  std::vector<const MemoryPoolEvent*> samples;
  for (const MemoryPoolEvent& p : ev.memory_pools) {
    if (p.op == PoolOpKind::kUsage && InStretch(p.timestamp_ns, from_ns, to_ns)) {
      samples.push_back(&p);
    }
  }
  if (samples.empty()) return;
  std::stable_sort(samples.begin(), samples.end(),
                   [](const MemoryPoolEvent* a, const MemoryPoolEvent* b) {
                     return a->timestamp_ns < b->timestamp_ns;
                   });
  // Each sample is one device's totals after an allocation or free: the process's total at that
  // moment is the sum of every device's latest sample.
  std::map<uint32_t, std::pair<int64_t, int64_t>> by_device;  // reserved, allocated
  for (const MemoryPoolEvent* p : samples) {
    by_device[p->device_id] = {static_cast<int64_t>(p->size), static_cast<int64_t>(p->utilized_bytes)};
    int64_t reserved = 0, allocated = 0;
    for (const auto& [device, totals] : by_device) {
      reserved += totals.first;
      allocated += totals.second;
    }
    if (out->samples++ == 0) {
      out->reserved_first_bytes = reserved;
      out->allocated_first_bytes = allocated;
    }
    out->reserved_last_bytes = reserved;
    out->allocated_last_bytes = allocated;
    out->reserved_peak_bytes = std::max(out->reserved_peak_bytes, reserved);
    out->allocated_peak_bytes = std::max(out->allocated_peak_bytes, allocated);
  }
}

}  // namespace

WindowMemory MeasureWindowMemory(const EventColumns& events, const StringTable& strings,
                                 int64_t from_ns, int64_t to_ns) {
  WindowMemory out;
  if (from_ns >= to_ns) return out;
  MeasureSegments(events, strings, from_ns, to_ns, &out);
  MeasureSamples(events, from_ns, to_ns, &out);
  return out;
}

void AppendStretch(const WindowMemory& later, WindowMemory* into) {
  into->segment_peak_rise_bytes = std::max(into->segment_peak_rise_bytes,
                                           into->segment_net_bytes + later.segment_peak_rise_bytes);
  into->segment_net_bytes += later.segment_net_bytes;
  into->segment_ops += later.segment_ops;
  if (later.samples > 0) {
    if (into->samples == 0) {
      into->reserved_first_bytes = later.reserved_first_bytes;
      into->allocated_first_bytes = later.allocated_first_bytes;
    }
    into->samples += later.samples;
    into->reserved_last_bytes = later.reserved_last_bytes;
    into->allocated_last_bytes = later.allocated_last_bytes;
    into->reserved_peak_bytes = std::max(into->reserved_peak_bytes, later.reserved_peak_bytes);
    into->allocated_peak_bytes = std::max(into->allocated_peak_bytes, later.allocated_peak_bytes);
  }
  into->sites.insert(into->sites.end(), later.sites.begin(), later.sites.end());
}

std::vector<std::optional<v1::StepMemory>> MemoryLevels(const std::vector<StepMemoryInput>& steps) {
  std::vector<std::optional<v1::StepMemory>> out;
  out.reserve(steps.size());
  // Segments: live bytes so far. Frees of segments allocated before the capture began (an
  // attach mid-run) would take it below zero; they are clamped, so the level counts the
  // segments the capture saw allocated.
  bool segments_seen = false;
  int64_t segments = 0;
  auto add_segments = [&](const WindowMemory& w) {
    if (w.segment_ops > 0) segments_seen = true;
    segments = std::max<int64_t>(0, segments + w.segment_net_bytes);
  };
  // Allocator samples: the totals after the latest sample so far.
  bool samples_seen = false;
  int64_t reserved = 0, allocated = 0;
  auto add_samples = [&](const WindowMemory& w) {
    if (w.samples == 0) return;
    samples_seen = true;
    reserved = w.reserved_last_bytes;
    allocated = w.allocated_last_bytes;
  };

  for (const StepMemoryInput& in : steps) {
    add_segments(in.before);
    add_samples(in.before);
    const WindowMemory& w = in.step;
    v1::StepMemory m;
    if (samples_seen || w.samples > 0) {
      // Before the first sample the totals are unknown: the step's first sample stands in.
      const int64_t reserved_start = samples_seen ? reserved : w.reserved_first_bytes;
      const int64_t allocated_start = samples_seen ? allocated : w.allocated_first_bytes;
      add_samples(w);
      m.set_source("allocator");
      m.set_reserved_start_bytes(reserved_start);
      m.set_reserved_end_bytes(reserved);
      m.set_reserved_peak_bytes(std::max({reserved_start, reserved, w.samples ? w.reserved_peak_bytes : 0}));
      m.set_has_allocated(true);
      m.set_allocated_end_bytes(allocated);
      m.set_allocated_peak_bytes(
          std::max({allocated_start, allocated, w.samples ? w.allocated_peak_bytes : 0}));
      m.set_allocated_growth_bytes(allocated - allocated_start);
      add_segments(w);
    } else if (segments_seen || w.segment_ops > 0) {
      m.set_source("segments");
      m.set_reserved_start_bytes(segments);
      m.set_reserved_peak_bytes(segments + w.segment_peak_rise_bytes);
      add_segments(w);
      m.set_reserved_end_bytes(segments);
    } else {
      out.emplace_back();
      continue;
    }
    m.set_reserved_growth_bytes(m.reserved_end_bytes() - m.reserved_start_bytes());
    for (const v1::AllocationSite& s : w.sites) *m.add_sites() = s;
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace gpuspy::analysis
