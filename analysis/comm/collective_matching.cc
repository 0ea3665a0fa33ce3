#include "analysis/comm/collective_matching.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "analysis/saturating.h"
#include "analysis/stats.h"

namespace gpuspy::analysis {
namespace {

// A collective's identity across ranks: group name, op, index within the step.
using MatchKey = std::tuple<std::string, CollectiveOp, uint32_t>;

struct Instance {
  size_t rank_slot;
  size_t op;
};


}  // namespace

std::vector<RankStepTiming> MatchStepCollectives(const std::vector<RankStepCollectives>& ranks) {
  std::vector<RankStepTiming> out(ranks.size());
  absl::flat_hash_map<MatchKey, std::vector<Instance>> matches;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const StepCollectives& sc = *ranks[r].collectives;
    out[r].timings.resize(sc.ops.size());
    for (size_t i = 0; i < sc.ops.size(); ++i) {
      const StepCollective& c = sc.ops[i];
      out[r].timings[i].transfer_ns = c.duration_ns();
      if (ranks.size() > 1 && c.op != CollectiveOp::kSendRecv) {
        matches[{sc.group_of(c), c.op, c.index}].push_back({r, i});
      }
    }
  }
  if (ranks.size() < 2) return out;

  auto op_of = [&](const Instance& x) -> const StepCollective& {
    return ranks[x.rank_slot].collectives->ops[x.op];
  };
  // Clock offsets from matched ends, against the first rank that has any collective.
  size_t reference = 0;
  while (reference < ranks.size() && ranks[reference].collectives->ops.empty()) ++reference;
  std::vector<std::vector<int64_t>> end_deltas(ranks.size());
  for (const auto& [key, instances] : matches) {
    auto ref = std::find_if(instances.begin(), instances.end(),
                            [&](const Instance& x) { return x.rank_slot == reference; });
    if (ref == instances.end()) continue;
    for (const Instance& x : instances) {
      end_deltas[x.rank_slot].push_back(SatSub(op_of(x).end_ns, op_of(*ref).end_ns));
    }
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (r != reference) out[r].clock_offset_ns = stats::Median(end_deltas[r]);
  }

  for (auto& [key, all] : matches) {
    // The same collective ends together everywhere; an instance that does not is another
    // group's (live capture has no group names: two tensor-parallel groups both run "allreduce
    // #0") and is left unmatched rather than given a wait that never happened.
    std::vector<int64_t> ends;
    for (const Instance& x : all) ends.push_back(SatSub(op_of(x).end_ns, out[x.rank_slot].clock_offset_ns));
    const int64_t median_end = stats::Median(ends);
    std::vector<int64_t> durations;
    for (const Instance& x : all) durations.push_back(op_of(x).duration_ns());
    const int64_t tolerance =
        std::max<int64_t>(kEndToleranceNs, static_cast<int64_t>(kEndToleranceShare * stats::Median(durations)));
    std::vector<Instance> instances;
    for (const Instance& x : all) {
      const int64_t end = SatSub(op_of(x).end_ns, out[x.rank_slot].clock_offset_ns);
      const int64_t off = SatSub(end, median_end);
      if (off >= -tolerance && off <= tolerance) instances.push_back(x);
    }
    if (instances.size() < 2) continue;
    int64_t last_arrival = 0;
    size_t last = instances.front().rank_slot;
    bool first = true;
    for (const Instance& x : instances) {
      const int64_t arrival = SatSub(op_of(x).start_ns, out[x.rank_slot].clock_offset_ns);
      if (first || arrival > last_arrival) {
        last_arrival = arrival;
        last = x.rank_slot;
        first = false;
      }
    }
    for (const Instance& x : instances) {
      const StepCollective& c = op_of(x);
      const int64_t arrival = SatSub(c.start_ns, out[x.rank_slot].clock_offset_ns);
      CollectiveTiming& t = out[x.rank_slot].timings[x.op];
      t.wait_ns = std::clamp<int64_t>(SatSub(last_arrival, arrival), 0, c.duration_ns());
      t.transfer_ns = c.duration_ns() - t.wait_ns;
      t.last_rank = ranks[last].rank;
      t.ranks_matched = static_cast<uint32_t>(instances.size());
    }
  }
  return out;
}

}  // namespace gpuspy::analysis
