#include "analysis/job_analysis.h"

#include <algorithm>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"

#include "analysis/cross_rank_analysis.h"
#include "analysis/diff/compare_ranks.h"
#include "analysis/evidence.h"
#include "analysis/hardware/step_floor.h"
#include "analysis/job_summary.h"
#include "analysis/step_kind.h"
#include "analysis/step_source.h"
#include "analysis/time_parts.h"

namespace gpuspy::analysis {

void AnalyzeJobSteps(const std::string& job_id, const std::vector<JobProcess>& processes,
                     std::map<uint64_t, std::vector<StepAnalysis>>* steps,
                     const std::set<uint64_t>& later_stretch) {
  for (const JobProcess& p : processes) {
    AnalyzeStepSeries(&(*steps)[p.process_id], !later_stretch.contains(p.process_id));
  }
  std::vector<RankSeries> ranks;
  for (const JobProcess& p : processes) {
    ranks.push_back({p.rank, static_cast<uint32_t>(std::max(0, p.world_size)),
                     &(*steps)[p.process_id], p.clock_offset_ns});
  }
  AnalyzeRanks(ranks);
  for (const JobProcess& p : processes) {
    const DevicePeaks* peaks = FindDevicePeaks(p.device_name, p.device_memory_bytes);
    for (StepAnalysis& s : (*steps)[p.process_id]) {
      ApplyDevicePeaks(p.device_name, peaks, s.report.breakdown().wall_ns(), s.report.mutable_floor());
    }
  }
  // The cross-rank findings came last: a window's say so too. Every pass is done: the time
  // split and the step's kind are final.
  for (auto& [id, series] : *steps) {
    for (StepAnalysis& s : series) {
      MarkWindowFindings(&s.report);
      // A step whose recording cannot carry a verdict is no steady step: it is left out of
      // every job figure (a 33-event excerpt must not make the job's median step).
      if (s.report.data_quality().insufficient()) s.report.set_steady_state(false);
      for (v1::Finding& f : *s.report.mutable_findings()) {
        const absl::string_view hint(f.fix_hint());
        if (absl::StrContains(hint, kJobPlaceholder)) {
          f.set_fix_hint(absl::StrReplaceAll(hint, {{kJobPlaceholder, job_id}}));
        }
      }
      SetTimeParts(s.report.mutable_breakdown());
      s.report.set_kind(StepKindOf(s.report));
    }
  }
}

v1::JobSummary SummarizeAnalyzedJob(const std::string& job_id,
                                    const std::vector<v1::StepReport>& reports,
                                    const std::vector<JobProcess>& processes) {
  uint64_t events = 0;
  std::vector<ProcessRank> ranks;
  for (const JobProcess& p : processes) {
    events += p.event_count;
    ranks.push_back({p.process_id, p.rank, p.host});
  }
  v1::JobSummary summary = SummarizeJob(job_id, reports, processes.size(), events);
  AddRankMatrix(reports, ranks, &summary);
  if (std::optional<v1::RankPair> pair = RanksToCompare(summary)) {
    *summary.mutable_compare_ranks() = *pair;
  }
  return summary;
}

}  // namespace gpuspy::analysis
