#include "collector/analysis/rank_matrix.h"

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"

namespace gpuspy::analysis {
namespace {

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

bool IsStraggler(const v1::StepReport& r) {
  return std::any_of(r.findings().begin(), r.findings().end(),
                     [](const v1::Finding& f) { return f.detector() == "straggler"; });
}

v1::RankStepCell Cell(const v1::StepReport& r, int32_t rank) {
  v1::RankStepCell c;
  c.set_rank(rank);
  c.set_process_id(r.step().process_id());
  c.set_primary_bottleneck(r.primary_bottleneck());
  c.set_wall_ns(r.breakdown().wall_ns());
  c.set_wait_ns(r.breakdown().comm_wait_ns());
  c.set_exposed_comm_ns(r.breakdown().exposed_comm_ns());
  c.set_lost_ns(r.findings().empty() ? 0 : r.findings(0).lost_ns());
  c.set_straggler(IsStraggler(r));
  return c;
}

}  // namespace

void AddRankMatrix(const std::vector<v1::StepReport>& steps, const std::vector<ProcessRank>& processes,
                   v1::JobSummary* summary) {
  absl::flat_hash_map<uint64_t, size_t> slot;
  std::vector<int32_t> rank_of(processes.size());
  for (size_t i = 0; i < processes.size(); ++i) {
    slot[processes[i].process_id] = i;
    rank_of[i] = processes[i].rank >= 0 ? processes[i].rank : static_cast<int32_t>(i);
  }
  std::map<int64_t, std::vector<v1::RankStepCell>> by_step;
  std::map<int64_t, bool> steady;
  struct RankAcc {
    std::vector<int64_t> walls, waits, exposed;
    uint64_t straggler_steps = 0;
    std::map<std::string, int> verdicts;
  };
  std::vector<RankAcc> acc(processes.size());
  for (const v1::StepReport& r : steps) {
    auto it = slot.find(r.step().process_id());
    if (it == slot.end()) continue;
    const v1::RankStepCell cell = Cell(r, rank_of[it->second]);
    // The job's step (steps found without NVTX are numbered per process).
    const int64_t number = r.has_job_step() ? r.job_step() : r.step().number();
    by_step[number].push_back(cell);
    auto [s, fresh] = steady.try_emplace(number, r.steady_state());
    if (!fresh) s->second = s->second && r.steady_state();
    if (!r.steady_state()) continue;
    RankAcc& a = acc[it->second];
    a.walls.push_back(cell.wall_ns());
    a.waits.push_back(cell.wait_ns());
    a.exposed.push_back(cell.exposed_comm_ns());
    a.straggler_steps += cell.straggler();
    a.verdicts[cell.primary_bottleneck()]++;
  }
  for (auto& [number, cells] : by_step) {
    std::sort(cells.begin(), cells.end(),
              [](const auto& a, const auto& b) { return a.rank() < b.rank(); });
    v1::JobStep* js = summary->add_steps();
    js->set_number(number);
    js->set_steady_state(steady[number]);
    js->set_straggler_rank(-1);
    js->set_slowest_rank(-1);
    int64_t straggler_lost = -1, slowest_work = -1;
    for (const v1::RankStepCell& c : cells) {
      js->set_max_wait_ns(std::max(js->max_wait_ns(), c.wait_ns()));
      if (c.straggler() && c.lost_ns() > straggler_lost) {
        straggler_lost = c.lost_ns();
        js->set_straggler_rank(c.rank());
      }
      // Own work: what the rank needed besides waiting for others.
      if (cells.size() > 1 && c.wall_ns() - c.wait_ns() > slowest_work) {
        slowest_work = c.wall_ns() - c.wait_ns();
        js->set_slowest_rank(c.rank());
      }
      *js->add_ranks() = c;
    }
  }
  for (size_t i = 0; i < processes.size(); ++i) {
    v1::RankSummary* rs = summary->add_ranks();
    rs->set_rank(rank_of[i]);
    rs->set_process_id(processes[i].process_id);
    rs->set_host(processes[i].host);
    rs->set_median_wall_ns(Median(acc[i].walls));
    rs->set_median_wait_ns(Median(acc[i].waits));
    rs->set_median_exposed_comm_ns(Median(acc[i].exposed));
    rs->set_straggler_steps(acc[i].straggler_steps);
    int best = 0;
    for (const auto& [verdict, n] : acc[i].verdicts) {
      if (n > best) best = n, rs->set_primary_bottleneck(verdict);
    }
  }
  std::sort(summary->mutable_ranks()->begin(), summary->mutable_ranks()->end(),
            [](const auto& a, const auto& b) { return a.rank() < b.rank(); });
}

}  // namespace gpuspy::analysis
