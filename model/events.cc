#include "model/events.h"

#include <algorithm>
#include <limits>

#include "absl/container/flat_hash_map.h"

namespace gpuspy {
namespace {

template <typename T>
void AppendAll(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

// A collective has no time of its own: it goes to the part holding its kernel (or graph launch),
// so that the batch a window read finds for the kernel holds the collective too. One whose kernel
// is not among the events is apportioned by index like the other kinds.
void SpreadCollectives(const std::vector<CollectiveEvent>& from, std::vector<EventColumns>* out) {
  if (from.empty()) return;
  const size_t n = out->size();
  absl::flat_hash_map<uint64_t, size_t> part_of;
  for (size_t c = 0; c < n; ++c) {
    for (const auto& g : (*out)[c].graph_launches) part_of.try_emplace(g.correlation_id, c);
    for (const auto& k : (*out)[c].kernels) part_of.try_emplace(k.correlation_id, c);
  }
  for (size_t i = 0; i < from.size(); ++i) {
    auto it = part_of.find(from[i].correlation_id);
    (*out)[it != part_of.end() ? it->second : i * n / from.size()].collectives.push_back(from[i]);
  }
}

}  // namespace

void EventColumns::Append(const EventColumns& other) {
  AppendAll(kernels, other.kernels);
  AppendAll(memcpys, other.memcpys);
  AppendAll(memsets, other.memsets);
  AppendAll(syncs, other.syncs);
  AppendAll(memory, other.memory);
  AppendAll(apis, other.apis);
  AppendAll(nvtx_ranges, other.nvtx_ranges);
  AppendAll(nvtx_marks, other.nvtx_marks);
  AppendAll(overheads, other.overheads);
  AppendAll(graph_launches, other.graph_launches);
  AppendAll(external_correlations, other.external_correlations);
  AppendAll(memory_pools, other.memory_pools);
  AppendAll(collectives, other.collectives);
  AppendAll(op_works, other.op_works);
  AppendAll(counter_samples, other.counter_samples);
}

std::vector<EventColumns> EventColumns::Split(size_t n) const {
  if (n <= 1) return {*this};
  std::vector<EventColumns> out(n);
  auto spread = [n, &out](const auto& from, auto member) {
    for (size_t c = 0; c < n; ++c) {
      const size_t lo = from.size() * c / n, hi = from.size() * (c + 1) / n;
      (out[c].*member).assign(from.begin() + lo, from.begin() + hi);
    }
  };
  spread(kernels, &EventColumns::kernels);
  spread(memcpys, &EventColumns::memcpys);
  spread(memsets, &EventColumns::memsets);
  spread(syncs, &EventColumns::syncs);
  spread(memory, &EventColumns::memory);
  spread(apis, &EventColumns::apis);
  spread(nvtx_ranges, &EventColumns::nvtx_ranges);
  spread(nvtx_marks, &EventColumns::nvtx_marks);
  spread(overheads, &EventColumns::overheads);
  spread(graph_launches, &EventColumns::graph_launches);
  spread(external_correlations, &EventColumns::external_correlations);
  spread(memory_pools, &EventColumns::memory_pools);
  spread(op_works, &EventColumns::op_works);
  spread(counter_samples, &EventColumns::counter_samples);
  SpreadCollectives(collectives, &out);
  std::erase_if(out, [](const EventColumns& c) { return c.empty(); });
  return out;
}

std::pair<int64_t, int64_t> EventColumns::TimeRange() const {
  int64_t lo = std::numeric_limits<int64_t>::max();
  int64_t hi = std::numeric_limits<int64_t>::min();
  auto span = [&](int64_t start, int64_t end) {
    lo = std::min(lo, start);
    hi = std::max(hi, end);
  };
  for (const auto& e : kernels) span(e.start_ns, e.end_ns);
  for (const auto& e : memcpys) span(e.start_ns, e.end_ns);
  for (const auto& e : memsets) span(e.start_ns, e.end_ns);
  for (const auto& e : syncs) span(e.start_ns, e.end_ns);
  for (const auto& e : memory) span(e.timestamp_ns, e.timestamp_ns);
  for (const auto& e : apis) span(e.start_ns, e.end_ns);
  for (const auto& e : nvtx_ranges) span(e.start_ns, e.end_ns);
  for (const auto& e : nvtx_marks) span(e.timestamp_ns, e.timestamp_ns);
  for (const auto& e : overheads) span(e.start_ns, e.end_ns);
  for (const auto& e : graph_launches) span(e.start_ns, e.end_ns);
  for (const auto& e : memory_pools) span(e.timestamp_ns, e.timestamp_ns);
  for (const auto& e : op_works) span(e.start_ns, e.end_ns);
  for (const auto& e : counter_samples) span(e.start_ns, e.end_ns);
  // External correlations and collectives carry no time of their own.
  if (lo > hi) return {0, 0};
  return {lo, hi};
}

}  // namespace gpuspy
