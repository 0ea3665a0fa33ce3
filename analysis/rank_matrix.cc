#include "analysis/detector_names.h"
#include "analysis/rank_matrix.h"

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "analysis/has_finding.h"
#include "analysis/stats.h"
#include "analysis/time_parts.h"

namespace gpuspy::analysis {
namespace {

// A rank whose own work (step minus waiting for others) is this much above the fastest rank's
// is marked slow (RankSummary.slow_own_work): below it, ranks differ by noise.
constexpr double kSlowOwnWorkShare = 0.05;

v1::RankStepCell Cell(const v1::StepReport& r, int32_t rank) {
  v1::RankStepCell c;
  c.set_rank(rank);
  c.set_process_id(r.step().process_id());
  c.set_primary_bottleneck(r.primary_bottleneck());
  c.set_wall_ns(r.breakdown().wall_ns());
  c.set_wait_ns(r.breakdown().comm_wait_ns());
  c.set_exposed_comm_ns(r.breakdown().exposed_comm_ns());
  c.set_lost_ns(r.findings().empty() ? 0 : r.findings(0).lost_ns());
  c.set_straggler(HasFinding(r, v1::straggler));
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
    std::vector<int64_t> walls, waits, exposed, own_work;
    std::vector<const v1::StepReport*> reports;
    uint64_t straggler_steps = 0;
    std::map<std::string, int> verdicts;  // by name: a tie goes to the first alphabetically
    void Add(const v1::StepReport& r, const v1::RankStepCell& cell) {
      walls.push_back(cell.wall_ns());
      waits.push_back(cell.wait_ns());
      exposed.push_back(cell.exposed_comm_ns());
      own_work.push_back(cell.wall_ns() - cell.wait_ns());
      reports.push_back(&r);
      straggler_steps += cell.straggler();
      verdicts[DetectorName(cell.primary_bottleneck())]++;
    }
  };
  // Per rank: its steady steps, and all its steps for a rank with none steady.
  std::vector<RankAcc> acc(processes.size()), any_acc(processes.size());
  struct StragglerAcc {
    std::vector<int64_t> lost;
    const v1::Finding* first = nullptr;
  };
  std::vector<StragglerAcc> stragglers(processes.size());
  for (const v1::StepReport& r : steps) {
    auto it = slot.find(r.step().process_id());
    if (it == slot.end()) continue;
    const v1::RankStepCell cell = Cell(r, rank_of[it->second]);
    // The job's step (steps found without NVTX are numbered per process).
    const int64_t number = r.has_job_step() ? r.job_step() : r.step().number();
    by_step[number].push_back(cell);
    auto [s, fresh] = steady.try_emplace(number, r.steady_state());
    if (!fresh) s->second = s->second && r.steady_state();
    for (const v1::Finding& f : r.findings()) {
      if (f.detector() != v1::straggler) continue;
      StragglerAcc& st = stragglers[it->second];
      st.lost.push_back(f.lost_ns());
      if (st.first == nullptr) st.first = &f;
    }
    if (!r.data_quality().insufficient()) any_acc[it->second].Add(r, cell);
    if (r.steady_state()) acc[it->second].Add(r, cell);
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
    std::vector<int64_t> waits;
    for (const v1::RankStepCell& c : cells) waits.push_back(c.wait_ns());
    js->set_min_wait_ns(waits.empty() ? 0 : *std::min_element(waits.begin(), waits.end()));
    js->set_median_wait_ns(stats::Median(std::move(waits)));
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
    if (acc[i].walls.empty()) acc[i] = std::move(any_acc[i]);
  }
  int64_t fastest_own_work = 0;
  for (const RankAcc& a : acc) {
    const int64_t own = stats::Median(a.own_work);
    if (own > 0 && (fastest_own_work == 0 || own < fastest_own_work)) fastest_own_work = own;
  }
  for (size_t i = 0; i < processes.size(); ++i) {
    v1::RankSummary* rs = summary->add_ranks();
    rs->set_rank(rank_of[i]);
    rs->set_process_id(processes[i].process_id);
    rs->set_host(processes[i].host);
    rs->set_median_wall_ns(stats::Median(acc[i].walls));
    rs->set_median_wait_ns(stats::Median(acc[i].waits));
    rs->set_median_exposed_comm_ns(stats::Median(acc[i].exposed));
    rs->set_straggler_steps(acc[i].straggler_steps);
    rs->set_steady_steps(acc[i].walls.size());
    rs->set_median_own_work_ns(stats::Median(acc[i].own_work));
    if (fastest_own_work > 0 && rs->median_own_work_ns() > 0) {
      rs->set_own_work_over_fastest(static_cast<double>(rs->median_own_work_ns()) / fastest_own_work - 1.0);
      rs->set_slow_own_work(rs->own_work_over_fastest() > kSlowOwnWorkShare);
    }
    for (int c = v1::TimeCause_MIN; c <= v1::TimeCause_MAX; ++c) {
      const auto cause = static_cast<v1::TimeCause>(c);
      if (cause == v1::TIME_CAUSE_UNSPECIFIED) continue;
      std::vector<int64_t> values;
      for (const v1::StepReport* r : acc[i].reports) values.push_back(PartNs(r->breakdown().parts(), cause));
      const int64_t ns = stats::Median(std::move(values));
      if (ns <= 0) continue;
      v1::TimePart* part = rs->add_median_parts();
      part->set_cause(cause);
      part->set_ns(ns);
    }
    const StragglerAcc& st = stragglers[i];
    rs->set_straggler_findings(st.lost.size());
    if (st.first != nullptr) {
      rs->set_straggler_median_lost_ns(stats::Median(st.lost));
      rs->set_straggler_title(st.first->title());
      rs->set_straggler_severity(st.first->severity());
    }
    int best = 0;
    for (const auto& [verdict, n] : acc[i].verdicts) {
      if (n <= best) continue;
      best = n;
      rs->set_primary_bottleneck(ParseDetector(verdict).value_or(v1::DETECTOR_UNSPECIFIED));
    }
  }
  std::sort(summary->mutable_ranks()->begin(), summary->mutable_ranks()->end(),
            [](const auto& a, const auto& b) { return a.rank() < b.rank(); });
}

}  // namespace gpuspy::analysis
