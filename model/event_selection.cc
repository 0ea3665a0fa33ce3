#include "model/event_selection.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"

namespace gpuspy {
namespace {

// EventColumns' kinds in its declaration order (= ToExpandedEvents' tie order).
constexpr auto kColumns = std::make_tuple(
    &EventColumns::kernels, &EventColumns::memcpys, &EventColumns::memsets, &EventColumns::syncs,
    &EventColumns::memory, &EventColumns::apis, &EventColumns::nvtx_ranges,
    &EventColumns::nvtx_marks, &EventColumns::overheads, &EventColumns::graph_launches,
    &EventColumns::external_correlations, &EventColumns::memory_pools, &EventColumns::collectives,
    &EventColumns::op_works, &EventColumns::counter_samples);
constexpr size_t kKinds = std::tuple_size_v<decltype(kColumns)>;
constexpr size_t kCollectives = 12;
static_assert(std::get<kCollectives>(kColumns) == &EventColumns::collectives);

// Start and end of any kind; point events have one timestamp, untimed ones 0.
template <typename E>
int64_t StartOf(const E& e) {
  if constexpr (requires { e.start_ns; }) {
    return e.start_ns;
  } else if constexpr (requires { e.timestamp_ns; }) {
    return e.timestamp_ns;
  } else {
    return 0;
  }
}
template <typename E>
int64_t EndOf(const E& e) {
  if constexpr (requires { e.end_ns; }) {
    return e.end_ns;
  } else if constexpr (requires { e.timestamp_ns; }) {
    return e.timestamp_ns;
  } else {
    return 0;
  }
}

struct Ref {
  int64_t start_ns;
  uint32_t kind;
  uint32_t index;
  friend bool operator<(const Ref& a, const Ref& b) {
    return std::tie(a.start_ns, a.kind, a.index) < std::tie(b.start_ns, b.kind, b.index);
  }
};

template <size_t... K>
void ForEachKind(std::index_sequence<K...>, auto&& f) {
  (f(std::integral_constant<size_t, K>{}), ...);
}

}  // namespace

Selection SelectEvents(const EventColumns& in, int64_t from_ns, int64_t to_ns, uint64_t limit,
                       EventColumns* out) {
  const bool windowed = from_ns != 0 || to_ns != 0;
  auto touches = [&](int64_t start_ns, int64_t end_ns) {
    return !windowed || (start_ns < to_ns && end_ns >= from_ns);
  };
  absl::flat_hash_set<uint64_t> launches;  // correlation ids of the kept kernels, graph launches
  if (windowed) {
    for (const auto& k : in.kernels) {
      if (touches(k.start_ns, k.end_ns)) launches.insert(k.correlation_id);
    }
    for (const auto& g : in.graph_launches) {
      if (touches(g.start_ns, g.end_ns)) launches.insert(g.correlation_id);
    }
  }
  std::vector<Ref> kept;
  kept.reserve(in.size());
  ForEachKind(std::make_index_sequence<kKinds>{}, [&](auto kind) {
    constexpr size_t K = decltype(kind)::value;
    const auto& column = in.*std::get<K>(kColumns);
    for (uint32_t i = 0; i < column.size(); ++i) {
      const auto& e = column[i];
      bool keep;
      if constexpr (K == kCollectives) {
        keep = !windowed || launches.contains(e.correlation_id);
      } else {
        keep = touches(StartOf(e), EndOf(e));
      }
      if (keep) kept.push_back(Ref{StartOf(e), static_cast<uint32_t>(K), i});
    }
  });
  Selection result;
  if (kept.size() > limit) {
    // Only the first `limit` in time order are wanted: order just those.
    std::nth_element(kept.begin(), kept.begin() + static_cast<ptrdiff_t>(limit), kept.end());
    kept.resize(limit);
    result.truncated = true;
  }
  std::sort(kept.begin(), kept.end());
  result.events = kept.size();
  for (const Ref& r : kept) {
    ForEachKind(std::make_index_sequence<kKinds>{}, [&](auto kind) {
      constexpr size_t K = decltype(kind)::value;
      if (r.kind == K) (out->*std::get<K>(kColumns)).push_back((in.*std::get<K>(kColumns))[r.index]);
    });
  }
  return result;
}

}  // namespace gpuspy
