// QueryEngine::AnalyzeRecentSteps: the report of a live job's recent steps costs those steps, not
// the job. Under unpaced producers every query finds new batches, so a whole-job answer (each
// process's thousands of cached steps copied, then the cross-step and cross-rank passes over all
// of them) took 15-35 s per query (issue 34 item 9, bench/results/report-latency-unpaced-*.md).
// Here each process analyses only the steps asked for and kRecentContextSteps before them (those
// give the cross-step passes a steady state to compare with: their median, the kernels seen
// before); the stretch's analyses are cached on their own and reused while their data stays.
#include <algorithm>
#include <limits>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "collector/query/job_processes.h"
#include "collector/query/query_engine.h"
#include "collector/query/stored_batches.h"

namespace gpuspy::collector {
namespace {

// Steps before the first one asked for that the cross-step passes see.
constexpr size_t kRecentContextSteps = 16;
// Steps' worth of batches MemoryBefore reads at a time.
constexpr size_t kPrefixPieceSteps = 64;

bool ByNumber(const StepRecord& a, const StepRecord& b) { return a.number < b.number; }

// A step record to search a list sorted by number for.
StepRecord Numbered(int64_t number) {
  StepRecord r;
  r.number = number;
  return r;
}

}  // namespace

absl::StatusOr<std::optional<std::map<uint64_t, std::vector<analysis::StepAnalysis>>>>
QueryEngine::AnalyzeRecentSteps(const v1::GetStepReportRequest& request,
                                const std::vector<ProcessRecord>& processes,
                                AnalysisBudget::Lease* lease) {
  using Result = std::optional<std::map<uint64_t, std::vector<analysis::StepAnalysis>>>;
  // Versions first: a batch stored while we look is looked at by the next query.
  std::map<uint64_t, uint64_t> versions;
  for (const ProcessRecord& p : processes) {
    versions[p.process_id] = versions_ != nullptr ? versions_->Version(p.process_id) : 0;
  }
  std::map<uint64_t, std::vector<StepRecord>> steps;
  for (const ProcessRecord& p : processes) {
    absl::StatusOr<std::vector<StepRecord>> found = StepsOf(p);
    if (!found.ok()) return found.status();
    std::sort(found->begin(), found->end(), ByNumber);
    steps[p.process_id] = std::move(*found);
  }
  // The step numbers asked for: one, or the last K that every process has reached. Unpaced
  // ranks run thousands of steps apart; each one's own last K would make the stretch everything
  // in between, on every rank (the cross-rank pass pairs steps by number), and the newest steps
  // complete on every rank are the ones a cross-rank report can say anything about.
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::max();
  if (request.last() > 0) {
    for (const auto& [id, s] : steps) {
      if (!s.empty()) hi = std::min(hi, s.back().number);
    }
    for (const auto& [id, s] : steps) {
      if (request.process_id() != 0 && id != request.process_id()) continue;
      const size_t reached = std::upper_bound(s.begin(), s.end(), Numbered(hi), ByNumber) - s.begin();
      if (reached == 0) continue;
      lo = std::min(lo, s[reached - std::min<size_t>(reached, request.last())].number);
    }
  } else {
    lo = hi = request.step();
  }
  if (lo > hi) return Result();  // no steps: the whole job is nothing
  // The stretch starts kRecentContextSteps before `lo` on the process that reaches back furthest,
  // the same step numbers on every rank (the cross-rank pass pairs steps by number).
  int64_t from = lo;
  for (const auto& [id, s] : steps) {
    const size_t first = std::lower_bound(s.begin(), s.end(), Numbered(lo), ByNumber) - s.begin();
    const size_t back = first - std::min(first, kRecentContextSteps);
    if (back < s.size()) from = std::min(from, s[back].number);
  }
  bool whole = true;
  for (const auto& [id, s] : steps) {
    whole = whole && (s.empty() || (s.front().number >= from && s.back().number <= hi));
  }
  if (whole) return Result();

  std::map<uint64_t, std::vector<analysis::StepAnalysis>> out;
  std::set<uint64_t> later_stretch;
  for (const ProcessRecord& p : processes) {
    const std::vector<StepRecord>& all = steps[p.process_id];
    const auto begin = std::lower_bound(all.begin(), all.end(), Numbered(from), ByNumber);
    const auto end = std::upper_bound(all.begin(), all.end(), Numbered(hi), ByNumber);
    const std::vector<StepRecord> stretch(begin, end);
    StepsToAnalyse how{.cache = &recent_cache_};
    if (begin != all.begin()) {
      later_stretch.insert(p.process_id);
      how.stretch = true;
      how.stretch_from = std::prev(begin)->end_ns;
    }
    const std::shared_ptr<std::mutex> analysing = AnalysisLockOf(p.process_id, /*recent=*/true);
    std::lock_guard one_at_a_time(*analysing);
    how.version = versions[p.process_id];
    absl::StatusOr<std::vector<analysis::StepAnalysis>> analysed = AnalyseStepsOf(p, stretch, how, lease);
    if (!analysed.ok()) return analysed.status();
    if (how.stretch && !analysed->empty()) {
      // Levels are absolute only with everything before the stretch measured (memory_usage.h).
      // Ingest's running totals when it saw the process from its first batch; else the
      // process's earlier batches are read (and the prefix kept for the next query).
      std::optional<analysis::WindowMemory> kept =
          memory_totals_ != nullptr ? memory_totals_->Before(p.process_id, begin->start_ns)
                                    : std::nullopt;
      if (kept.has_value()) {
        ++memory_totals_used_;
        analysed->front().memory.before = *std::move(kept);
      } else {
        absl::StatusOr<analysis::WindowMemory> before =
            MemoryBefore(p, all, begin->start_ns, how.version, lease);
        if (!before.ok()) return before.status();
        analysed->front().memory.before = *std::move(before);
      }
    }
    out[p.process_id] = std::move(*analysed);
  }
  analysis::AnalyzeJobSteps(JobIdOf(processes), JobProcesses(processes), &out, later_stretch);
  return Result(std::move(out));
}

absl::StatusOr<analysis::WindowMemory> QueryEngine::MemoryBefore(const ProcessRecord& process,
                                                                 const std::vector<StepRecord>& steps,
                                                                 int64_t to_ns, uint64_t version,
                                                                 AnalysisBudget::Lease* lease) {
  MemoryPrefix prefix;
  prefix.up_to_ns = std::numeric_limits<int64_t>::min();
  prefix.version = version;
  {
    std::lock_guard lock(prefixes_mu_);
    auto it = memory_prefixes_.find(process.process_id);
    // Reusable when nothing stored since touched the time it covers.
    if (it != memory_prefixes_.end() && it->second.up_to_ns <= to_ns && versions_ != nullptr &&
        versions_->EarliestSince(process.process_id, it->second.version) >= it->second.up_to_ns) {
      prefix = it->second;
      prefix.version = version;
    }
  }
  if (prefix.up_to_ns < to_ns) {
    // In pieces of kPrefixPieceSteps steps: one read holds the store's lock, and every payload it
    // returns, at once (read whole, a job's history stalled ingest for minutes).
    std::vector<int64_t> cuts;
    size_t n = 0;
    for (const StepRecord& s : steps) {
      if (s.start_ns <= prefix.up_to_ns || s.start_ns >= to_ns) continue;
      if (++n % kPrefixPieceSteps == 0) cuts.push_back(s.start_ns);
    }
    cuts.push_back(to_ns);
    StoredBatches source(store_, &reader_, process, {.cache = &cache_, .lease = lease, .cancelled = &cancelled_});
    for (const int64_t cut : cuts) {
      const int64_t from = prefix.up_to_ns;
      absl::Status read = source.ForEachBatchIn(from, cut, [&](const EventColumns& events, const StringTable& strings) {
        ++memory_prefix_batches_read_;
        analysis::AppendStretch(analysis::MeasureWindowMemory(events, strings, from, cut), &prefix.memory);
      });
      if (!read.ok()) return read;
      if (cancelled_.load()) return absl::CancelledError("gpuspyd is shutting down");
      prefix.up_to_ns = cut;
    }
  }
  std::lock_guard lock(prefixes_mu_);
  memory_prefixes_[process.process_id] = prefix;
  return prefix.memory;
}

}  // namespace gpuspy::collector
