#include "analysis/cross_rank_analysis.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "analysis/comm/collective_matching.h"
#include "analysis/detectors/comm_context.h"
#include "analysis/detectors/detectors.h"
#include "analysis/intervals.h"
#include "analysis/job_step_gains.h"
#include "analysis/job_steps.h"
#include "analysis/step_time_straggler.h"
#include "analysis/stats.h"

namespace gpuspy::analysis {
namespace {

struct Slot {
  size_t series;
  StepAnalysis* step;
};
using JobSteps = std::map<int64_t, std::vector<Slot>>;

// The same collective in another step (or on another rank): its best transfer time is what it
// needs when nobody is late.
uint64_t SignatureOf(const StepCollectives& sc, const StepCollective& c) {
  if (c.bytes > 0) {
    return absl::Hash<std::tuple<std::string, int, uint64_t>>{}(
        {sc.group_of(c), static_cast<int>(c.op), c.bytes});
  }
  return absl::Hash<std::tuple<std::string, std::string, uint32_t>>{}(
      {sc.kernel_of(c), sc.group_of(c), c.index});
}

std::vector<RankStepCollectives> Inputs(const std::vector<RankSeries>& ranks,
                                        const std::vector<Slot>& slots) {
  std::vector<RankStepCollectives> in;
  in.reserve(slots.size());
  for (const Slot& s : slots) {
    const int32_t rank = ranks[s.series].rank >= 0 ? ranks[s.series].rank : static_cast<int32_t>(s.series);
    in.push_back({rank, s.step->collectives.get()});
  }
  return in;
}

bool AnyCollectives(const std::vector<Slot>& slots) {
  return std::any_of(slots.begin(), slots.end(),
                     [](const Slot& s) { return !s.step->collectives->ops.empty(); });
}

uint32_t GroupSizeOf(const StepCollective& c, const RankSeries& series) {
  return c.group_size > 0 ? c.group_size : series.world_size;
}

// nccl-tests' busBw in GB/s (bytes/ns) of one collective; 0 when its size is unknown.
double BusBandwidthGbps(const StepCollective& c, const CollectiveTiming& x, const RankSeries& series) {
  if (c.bytes == 0 || x.transfer_ns <= 0) return 0;
  const uint32_t n = GroupSizeOf(c, series) > 0 ? GroupSizeOf(c, series) : x.ranks_matched;
  return static_cast<double>(c.bytes) * BusBandwidthFactor(c.op, n) / static_cast<double>(x.transfer_ns);
}

// A collective that took far longer than its best while not every rank of its group was
// captured: the excess is a wait for a rank we cannot see. With no peer captured in the step at
// all (`alone`) nothing says the excess was a wait rather than slower transfers: it stays
// unattributed, and no peer is blamed for it.
void AddUncapturedWaits(const StepCollectives& sc, const RankSeries& series,
                        const absl::flat_hash_map<uint64_t, int64_t>& best, bool alone,
                        RankStepTiming* t) {
  for (size_t k = 0; k < sc.ops.size(); ++k) {
    const StepCollective& c = sc.ops[k];
    CollectiveTiming& x = t->timings[k];
    const uint32_t expected = GroupSizeOf(c, series);
    const bool complete = expected > 0 ? x.ranks_matched >= expected : x.ranks_matched >= 2;
    if (complete) continue;
    auto it = best.find(SignatureOf(sc, c));
    if (it == best.end()) continue;
    const int64_t ref = it->second;
    if (x.transfer_ns <= kExcessFactor * ref || x.transfer_ns - ref < kMinExcessNs) continue;
    const int64_t extra = x.transfer_ns - ref;
    if (alone) {
      x.unattributed_ns = extra;
      continue;
    }
    if (extra > x.wait_ns) x.last_rank = kUncapturedPeer;
    x.wait_ns += extra;
    x.transfer_ns = ref;
  }
}

int64_t MedianBytes(const StepCollectives& sc) {
  std::vector<uint64_t> sizes;
  for (const auto& c : sc.ops) {
    if (c.bytes > 0) sizes.push_back(c.bytes);
  }
  return static_cast<int64_t>(stats::Median(std::move(sizes)));
}

// Fills the comm split and CommSummary of one rank's step; returns its exposed wait (what the
// wait cost) per late rank.
std::map<int32_t, int64_t> Summarize(const StepCollectives& sc, const RankStepTiming& t,
                                     const RankSeries& series, int32_t rank, size_t ranks_in_step,
                                     v1::StepReport* report) {
  std::map<int32_t, int64_t> wait_by_late_rank;
  auto* b = report->mutable_breakdown();
  auto* c = report->mutable_comm();
  const Interval window{report->step().start_ns(), report->step().end_ns()};
  std::vector<Interval> waits, unattributed;
  uint64_t bytes = 0;
  double bus_bytes = 0, bus_ns = 0;
  for (size_t k = 0; k < sc.ops.size(); ++k) {
    const StepCollective& op = sc.ops[k];
    const CollectiveTiming& x = t.timings[k];
    bytes += op.bytes;
    if (x.wait_ns > 0) {
      waits.push_back({op.start_ns, op.start_ns + x.wait_ns});
      wait_by_late_rank[x.last_rank] += sc.ExposedNs(op.start_ns, op.start_ns + x.wait_ns);
    }
    // Where it lies in the collective is unknown too: at its start, as a wait would.
    if (x.unattributed_ns > 0) unattributed.push_back({op.start_ns, op.start_ns + x.unattributed_ns});
    if (const double gbps = BusBandwidthGbps(op, x, series); gbps > 0) {
      bus_bytes += gbps * static_cast<double>(x.transfer_ns);
      bus_ns += static_cast<double>(x.transfer_ns);
    }
  }
  const IntervalSet wait_set = IntervalSet::Union(std::move(waits)).Clip(window);
  const int64_t wait_ns = wait_set.TotalLength();
  int64_t exposed_wait_ns = 0;
  for (const Interval& w : wait_set.intervals()) exposed_wait_ns += sc.ExposedNs(w.start_ns, w.end_ns);
  const IntervalSet unattributed_set = IntervalSet::Union(std::move(unattributed)).Clip(window);
  int64_t exposed_unattributed_ns = 0;
  for (const Interval& u : unattributed_set.intervals()) exposed_unattributed_ns += sc.ExposedNs(u.start_ns, u.end_ns);
  const int64_t comm_ns = b->communication_ns();
  b->set_comm_wait_ns(std::min(wait_ns, comm_ns));
  b->set_comm_transfer_ns(comm_ns - b->comm_wait_ns());

  c->set_rank(rank);
  c->set_ranks_in_step(static_cast<uint32_t>(ranks_in_step));
  c->set_collective_count(sc.ops.size());
  c->set_bytes(bytes);
  c->set_median_bytes(MedianBytes(sc));
  c->set_comm_ns(comm_ns);
  c->set_wait_ns(b->comm_wait_ns());
  c->set_exposed_wait_ns(std::min(exposed_wait_ns, b->comm_wait_ns()));
  c->set_transfer_ns(b->comm_transfer_ns());
  c->set_unattributed_ns(std::min(unattributed_set.TotalLength(), b->comm_transfer_ns()));
  c->set_exposed_unattributed_ns(std::min(exposed_unattributed_ns, c->unattributed_ns()));
  c->set_exposed_ns(b->exposed_comm_ns());
  c->set_clock_offset_ns(t.clock_offset_ns);
  c->set_bus_bandwidth_gbps(bus_ns > 0 ? bus_bytes / bus_ns : 0);  // bytes/ns = GB/s
  int32_t waited_for = -1;
  int64_t most = 0;
  for (const auto& [late, ns] : wait_by_late_rank) {
    if (ns > most) most = ns, waited_for = late;
  }
  c->set_waited_for_rank(waited_for);

  std::vector<size_t> order(sc.ops.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  const size_t listed = std::min<size_t>(order.size(), kListedCollectives);
  std::partial_sort(order.begin(), order.begin() + listed, order.end(), [&](size_t a, size_t z) {
    if (t.timings[a].wait_ns != t.timings[z].wait_ns) return t.timings[a].wait_ns > t.timings[z].wait_ns;
    return sc.ops[a].duration_ns() > sc.ops[z].duration_ns();
  });
  c->clear_collectives();
  for (size_t i = 0; i < listed; ++i) {
    const StepCollective& op = sc.ops[order[i]];
    const CollectiveTiming& x = t.timings[order[i]];
    v1::CollectiveWait* w = c->add_collectives();
    w->set_op(std::string(CollectiveOpName(op.op)));
    w->set_kernel(sc.kernel_of(op));
    w->set_group(sc.group_of(op));
    w->set_index(op.index);
    w->set_start_ns(op.start_ns);
    w->set_duration_ns(op.duration_ns());
    w->set_wait_ns(x.wait_ns);
    w->set_exposed_wait_ns(sc.ExposedNs(op.start_ns, op.start_ns + x.wait_ns));
    w->set_transfer_ns(x.transfer_ns);
    w->set_bytes(op.bytes);
    w->set_bus_bandwidth_gbps(BusBandwidthGbps(op, x, series));
    w->set_last_rank(x.last_rank);
    w->set_ranks_matched(x.ranks_matched);
  }
  return wait_by_late_rank;
}

v1::Finding* FindingOf(v1::StepReport* r, v1::Detector detector) {
  for (auto& f : *r->mutable_findings()) {
    if (f.detector() == detector) return &f;
  }
  return nullptr;
}

// A waiting rank's finding says why the rank it waits for is late (that rank's straggler
// finding knows), so one report answers who, how long and why.
void NameTheLateRanksCause(const std::vector<Slot>& slots, const std::vector<int32_t>& rank_of) {
  for (const Slot& s : slots) {
    v1::Finding* wait = FindingOf(&s.step->report, v1::straggler_wait);
    if (wait == nullptr) continue;
    const int32_t late = s.step->report.comm().waited_for_rank();
    for (size_t j = 0; j < slots.size(); ++j) {
      if (rank_of[j] != late) continue;
      const v1::Finding* straggler = FindingOf(&slots[j].step->report, v1::straggler);
      if (straggler == nullptr) break;
      for (const v1::Evidence& why : straggler->evidence()) {
        if (why.key() != "why") continue;
        auto* e = wait->add_evidence();
        e->set_key("why_rank_" + std::to_string(late) + "_is_late");
        e->set_value(why.value());
      }
      break;
    }
  }
}

void RunCommDetectors(const std::vector<Slot>& slots, const std::vector<int32_t>& rank_of,
                      const std::vector<std::map<int32_t, int64_t>>& waits) {
  // Each rank's own findings first become what their fix saves the job (job_step_gains.h): a
  // speed-up before a collective the rank waited in is more waiting, not a shorter step.
  std::vector<v1::StepReport*> reports;
  bool uncaptured_peer = false;
  for (const Slot& s : slots) {
    if (!s.step->report.has_comm()) continue;
    reports.push_back(&s.step->report);
    uncaptured_peer = uncaptured_peer || s.step->report.comm().waited_for_rank() == kUncapturedPeer;
  }
  SetJobGains(reports, uncaptured_peer);
  for (size_t i = 0; i < slots.size(); ++i) {
    v1::StepReport& report = slots[i].step->report;
    if (!report.has_comm()) continue;
    std::vector<PeerStep> peers;
    for (size_t j = 0; j < slots.size(); ++j) {
      if (j == i) continue;
      auto it = waits[j].find(rank_of[i]);
      peers.push_back({rank_of[j], &slots[j].step->report, it == waits[j].end() ? 0 : it->second});
    }
    // What the rank this one waited for keeping pace saves: the least any rank (this one too)
    // waited for it, as that rank's straggler finding predicts.
    std::optional<int64_t> late_gain;
    const int32_t late = report.comm().waited_for_rank();
    for (size_t j = 0; late >= 0 && j < slots.size(); ++j) {
      if (rank_of[j] == late) continue;
      auto it = waits[j].find(late);
      const int64_t wait = it == waits[j].end() ? 0 : std::max<int64_t>(it->second, 0);
      late_gain = late_gain ? std::min(*late_gain, wait) : wait;
    }
    const CommStepContext ctx{report, peers, late_gain};
    std::vector<v1::Finding> found;
    for (CommDetector detect : AllCommDetectors()) {
      if (std::optional<v1::Finding> f = detect(ctx)) found.push_back(std::move(*f));
    }
    if (found.empty()) continue;
    // Ahead of the step's own findings: on equal lost time the cross-rank cause is the verdict
    // (a straggler's input stall costs the whole job, not just this rank).
    for (auto& f : *report.mutable_findings()) found.push_back(std::move(f));
    report.clear_findings();
    MergeStragglerCause(&found);
    for (auto& f : found) *report.add_findings() = std::move(f);
  }
  NameTheLateRanksCause(slots, rank_of);
  for (const Slot& s : slots) {
    if (s.step->report.has_comm()) RankFindings(&s.step->report);
  }
}

}  // namespace

void AnalyzeRanks(const std::vector<RankSeries>& ranks) {
  // Rank order: the reference is the lowest rank, whatever order the store lists processes in
  // (reports must not depend on it).
  auto series_key = [&](size_t s) {
    return std::make_pair(ranks[s].rank < 0, ranks[s].rank < 0 ? static_cast<int64_t>(s) : ranks[s].rank);
  };
  auto rank_key = [&](const Slot& s) { return series_key(s.series); };
  std::vector<RankSteps> rank_steps;
  size_t reference = 0;
  for (size_t s = 0; s < ranks.size(); ++s) {
    rank_steps.push_back({ranks[s].steps, ranks[s].unix_offset_ns});
    if (series_key(s) < series_key(reference)) reference = s;
  }
  const std::vector<std::vector<int64_t>> keys = JobStepKeys(rank_steps, reference);
  JobSteps job;
  for (size_t s = 0; s < ranks.size(); ++s) {
    for (size_t j = 0; j < ranks[s].steps->size(); ++j) {
      StepAnalysis& a = (*ranks[s].steps)[j];
      if (keys[s][j] > kUnpairedStepKeys) a.report.set_job_step(keys[s][j]);
      job[keys[s][j]].push_back({s, &a});
    }
  }
  for (auto& [number, slots] : job) {
    std::stable_sort(slots.begin(), slots.end(),
                     [&](const Slot& a, const Slot& b) { return rank_key(a) < rank_key(b); });
  }
  bool any = false;
  for (const auto& [number, slots] : job) any = any || AnyCollectives(slots);
  if (!any) {
    std::vector<std::vector<StepAnalysis>*> series;
    for (const RankSeries& r : ranks) series.push_back(r.steps);
    AddStepTimeStragglers(series);
    return;
  }
  // Pass 1: each collective signature's best transfer time over the job, after cross-rank waits.
  absl::flat_hash_map<uint64_t, int64_t> best;
  for (const auto& [number, slots] : job) {
    if (!AnyCollectives(slots)) continue;
    const std::vector<RankStepTiming> t = MatchStepCollectives(Inputs(ranks, slots));
    for (size_t i = 0; i < slots.size(); ++i) {
      const StepCollectives& sc = *slots[i].step->collectives;
      for (size_t k = 0; k < sc.ops.size(); ++k) {
        auto [it, fresh] = best.try_emplace(SignatureOf(sc, sc.ops[k]), t[i].timings[k].transfer_ns);
        if (!fresh) it->second = std::min(it->second, t[i].timings[k].transfer_ns);
      }
    }
  }
  // Pass 2: waits, summaries, findings.
  for (const auto& [number, slots] : job) {
    if (!AnyCollectives(slots)) continue;
    const std::vector<RankStepCollectives> in = Inputs(ranks, slots);
    std::vector<RankStepTiming> t = MatchStepCollectives(in);
    std::vector<int32_t> rank_of(slots.size());
    std::vector<std::map<int32_t, int64_t>> waits(slots.size());
    for (size_t i = 0; i < slots.size(); ++i) {
      rank_of[i] = in[i].rank;
      const StepCollectives& sc = *slots[i].step->collectives;
      if (sc.ops.empty()) continue;
      const RankSeries& series = ranks[slots[i].series];
      AddUncapturedWaits(sc, series, best, /*alone=*/slots.size() == 1, &t[i]);
      waits[i] = Summarize(sc, t[i], series, rank_of[i], slots.size(), &slots[i].step->report);
    }
    RunCommDetectors(slots, rank_of, waits);
  }
}

}  // namespace gpuspy::analysis
