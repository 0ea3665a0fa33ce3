#include "analysis/diff/compare_ranks.h"

#include <algorithm>
#include <tuple>
#include <vector>

namespace gpuspy::analysis {

std::optional<v1::RankPair> RanksToCompare(const v1::JobSummary& summary) {
  if (summary.ranks_size() < 2) return std::nullopt;
  std::vector<const v1::RankSummary*> ranks;
  for (const v1::RankSummary& r : summary.ranks()) ranks.push_back(&r);
  auto own = [](const v1::RankSummary* r) { return r->median_wall_ns() - r->median_wait_ns(); };
  // Slowest first: most straggler steps, then most own work, then the lower rank.
  std::sort(ranks.begin(), ranks.end(), [&](const auto* x, const auto* y) {
    return std::make_tuple(-static_cast<int64_t>(x->straggler_steps()), -own(x), x->rank()) <
           std::make_tuple(-static_cast<int64_t>(y->straggler_steps()), -own(y), y->rank());
  });
  const auto fastest = std::min_element(ranks.begin() + 1, ranks.end(), [&](const auto* x, const auto* y) {
    return std::make_pair(own(x), x->rank()) < std::make_pair(own(y), y->rank());
  });
  v1::RankPair pair;
  pair.set_a((*fastest)->rank());
  pair.set_b(ranks.front()->rank());
  return pair;
}

}  // namespace gpuspy::analysis
