#include "analysis/comm/step_collectives.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "analysis/kernel_classifier.h"

namespace gpuspy::analysis {

size_t StepCollectives::ApproxBytes() const {
  size_t n = sizeof(*this) + ops.capacity() * sizeof(StepCollective) +
             compute_in_comm.capacity() * sizeof(Interval);
  for (const auto& k : kernels) n += sizeof(k) + k.capacity();
  for (const auto& g : groups) n += sizeof(g) + g.capacity();
  return n;
}

int64_t StepCollectives::ExposedNs(int64_t start_ns, int64_t end_ns) const {
  int64_t covered = 0;
  auto it = std::lower_bound(compute_in_comm.begin(), compute_in_comm.end(), start_ns,
                             [](const Interval& i, int64_t t) { return i.end_ns <= t; });
  for (; it != compute_in_comm.end() && it->start_ns < end_ns; ++it) {
    covered += std::min(it->end_ns, end_ns) - std::max(it->start_ns, start_ns);
  }
  return std::max<int64_t>(0, end_ns - start_ns - covered);
}

namespace {

constexpr int64_t kMaxCollectiveNs = 3600ll * 1'000'000'000;  // an hour

// Compute (non-communication kernels, copies, memsets, whole graphs) that runs while a
// collective does.
std::vector<Interval> ComputeDuring(const EventColumns& ev, const IntervalSet& comm,
                                    KernelClasses& classes, const StringTable& strings) {
  if (comm.empty()) return {};
  const Interval span{comm.intervals().front().start_ns, comm.intervals().back().end_ns};
  std::vector<Interval> compute;
  auto add = [&](int64_t start, int64_t end) {
    if (start < span.end_ns && end > span.start_ns) compute.push_back({start, end});
  };
  for (const KernelEvent& k : ev.kernels) {
    if (!classes.IsCommunication(strings, k.name)) add(k.start_ns, k.end_ns);
  }
  for (const MemcpyEvent& m : ev.memcpys) add(m.start_ns, m.end_ns);
  for (const MemsetEvent& m : ev.memsets) add(m.start_ns, m.end_ns);
  for (const GraphLaunchEvent& g : ev.graph_launches) add(g.start_ns, g.end_ns);
  return IntervalSet::Union(std::move(compute)).Intersect(comm).intervals();
}

}  // namespace

StepCollectives ExtractStepCollectives(const EventColumns& ev, const StringTable& strings,
                                       const StepWindow& step, KernelClasses* shared_classes) {
  StepCollectives out;
  absl::flat_hash_map<uint64_t, const CollectiveEvent*> args;
  for (const CollectiveEvent& c : ev.collectives) args.emplace(c.correlation_id, &c);
  KernelClasses own_classes;
  KernelClasses& classes = shared_classes != nullptr ? *shared_classes : own_classes;
  absl::flat_hash_map<StringRef, uint32_t> kernel_slot;
  absl::flat_hash_map<StringRef, uint32_t> group_slot;

  for (const KernelEvent& k : ev.kernels) {
    if (k.start_ns < step.start_ns || k.start_ns >= step.end_ns) continue;
    if (!classes.IsCommunication(strings, k.name)) continue;
    // A collective longer than any step could be is a broken record, not a wait.
    int64_t duration = 0;
    if (__builtin_sub_overflow(k.end_ns, k.start_ns, &duration) || duration > kMaxCollectiveNs) continue;
    auto [slot, fresh] = kernel_slot.try_emplace(k.name, static_cast<uint32_t>(out.kernels.size()));
    if (fresh) out.kernels.emplace_back(strings.Get(k.name));
    StepCollective c;
    c.start_ns = k.start_ns;
    c.end_ns = std::max(k.end_ns, k.start_ns);
    c.kernel = slot->second;
    c.op = CollectiveOpOfKernel(out.kernels[c.kernel]);
    if (auto a = args.find(k.correlation_id); a != args.end()) {
      const CollectiveEvent& meta = *a->second;
      if (CollectiveOp named = ParseCollectiveName(strings.Get(meta.op));
          named != CollectiveOp::kUnknown) {
        c.op = named;
      }
      c.bytes = std::max(meta.in_bytes, meta.out_bytes);
      c.group_size = meta.group_size;
      if (meta.group != 0 && !strings.Get(meta.group).empty()) {
        auto [g, added] = group_slot.try_emplace(meta.group, static_cast<uint32_t>(out.groups.size()));
        if (added) out.groups.emplace_back(strings.Get(meta.group));
        c.group = g->second;
      }
    }
    out.ops.push_back(c);
  }
  std::stable_sort(out.ops.begin(), out.ops.end(),
                   [](const StepCollective& a, const StepCollective& b) { return a.start_ns < b.start_ns; });
  std::vector<Interval> comm;
  for (const StepCollective& c : out.ops) comm.push_back({c.start_ns, c.end_ns});
  out.compute_in_comm = ComputeDuring(ev, IntervalSet::Union(std::move(comm)), classes, strings);
  std::map<std::pair<uint32_t, CollectiveOp>, uint32_t> next_index;
  for (StepCollective& c : out.ops) c.index = next_index[{c.group, c.op}]++;
  return out;
}

}  // namespace gpuspy::analysis
