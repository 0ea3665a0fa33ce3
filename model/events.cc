#include "model/events.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "absl/container/flat_hash_map.h"

namespace gpuspy {
namespace {

// Calls f(&EventColumns::column) for every column, so that the code treating them all alike lists
// them once (a column added to EventColumns is added here).
template <typename F>
void ForEachColumn(F&& f) {
  f(&EventColumns::kernels);
  f(&EventColumns::memcpys);
  f(&EventColumns::memsets);
  f(&EventColumns::syncs);
  f(&EventColumns::memory);
  f(&EventColumns::apis);
  f(&EventColumns::nvtx_ranges);
  f(&EventColumns::nvtx_marks);
  f(&EventColumns::overheads);
  f(&EventColumns::graph_launches);
  f(&EventColumns::external_correlations);
  f(&EventColumns::memory_pools);
  f(&EventColumns::collectives);
  f(&EventColumns::op_works);
  f(&EventColumns::counter_samples);
}

// A part's share of one kind of events: [size * c / n, size * (c + 1) / n).
template <typename T>
std::pair<size_t, size_t> PartBounds(const std::vector<T>& from, size_t c, size_t n) {
  return {from.size() * c / n, from.size() * (c + 1) / n};
}

}  // namespace

void EventColumns::Append(const EventColumns& other) {
  ForEachColumn([&](auto column) {
    (this->*column).insert((this->*column).end(), (other.*column).begin(), (other.*column).end());
  });
}

void EventColumns::ClearKeepingCapacity() {
  ForEachColumn([&](auto column) { (this->*column).clear(); });
}

size_t EventColumns::Bytes() const {
  size_t bytes = 0;
  ForEachColumn([&](auto column) {
    const auto& events = this->*column;
    bytes += events.size() * sizeof(events[0]);
  });
  return bytes;
}

std::vector<EventColumns> EventColumns::Split(size_t n) const {
  if (n <= 1) return {*this};
  const std::vector<std::vector<uint32_t>> collectives_of = CollectivesByPart(n);
  std::vector<EventColumns> out(n);
  for (size_t c = 0; c < n; ++c) AppendPart(c, n, collectives_of[c], &out[c]);
  std::erase_if(out, [](const EventColumns& c) { return c.empty(); });
  return out;
}

// A collective has no time of its own: it goes to the part holding its kernel (or graph launch),
// so that the batch a window read finds for the kernel holds the collective too. One whose kernel
// is not among the events is apportioned by index like the other kinds.
std::vector<std::vector<uint32_t>> EventColumns::CollectivesByPart(size_t n) const {
  std::vector<std::vector<uint32_t>> out(n);
  if (collectives.empty() || n == 0) return out;
  absl::flat_hash_map<uint64_t, size_t> part_of;
  for (size_t c = 0; c < n; ++c) {
    const auto [glo, ghi] = PartBounds(graph_launches, c, n);
    for (size_t i = glo; i < ghi; ++i) part_of.try_emplace(graph_launches[i].correlation_id, c);
    const auto [klo, khi] = PartBounds(kernels, c, n);
    for (size_t i = klo; i < khi; ++i) part_of.try_emplace(kernels[i].correlation_id, c);
  }
  for (size_t i = 0; i < collectives.size(); ++i) {
    auto it = part_of.find(collectives[i].correlation_id);
    out[it != part_of.end() ? it->second : i * n / collectives.size()].push_back(static_cast<uint32_t>(i));
  }
  return out;
}

void EventColumns::AppendPart(size_t c, size_t n, const std::vector<uint32_t>& part_collectives,
                              EventColumns* out) const {
  ForEachColumn([&](auto column) {
    auto& to = out->*column;
    const auto& from = this->*column;
    if constexpr (std::is_same_v<decltype(column), decltype(&EventColumns::collectives)>) {
      for (uint32_t i : part_collectives) to.push_back(from[i]);  // with their kernels
    } else {
      const auto [lo, hi] = PartBounds(from, c, n);
      to.insert(to.end(), from.begin() + static_cast<ptrdiff_t>(lo), from.begin() + static_cast<ptrdiff_t>(hi));
    }
  });
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
