#include "collector/analysis/job_analysis.h"

#include <algorithm>
#include <optional>

#include "collector/analysis/cross_rank_analysis.h"
#include "collector/analysis/diff/compare_ranks.h"
#include "collector/analysis/job_summary.h"
#include "collector/analysis/step_source.h"

namespace gpuspy::analysis {

void AnalyzeJobSteps(const std::vector<JobProcess>& processes,
                     std::map<uint64_t, std::vector<StepAnalysis>>* steps) {
  for (const JobProcess& p : processes) AnalyzeStepSeries(&(*steps)[p.process_id]);
  std::vector<RankSeries> ranks;
  for (const JobProcess& p : processes) {
    ranks.push_back({p.rank, static_cast<uint32_t>(std::max(0, p.world_size)),
                     &(*steps)[p.process_id], p.clock_offset_ns});
  }
  AnalyzeRanks(ranks);
  // The cross-rank findings came last: a window's say so too.
  for (auto& [id, series] : *steps) {
    for (StepAnalysis& s : series) MarkWindowFindings(&s.report);
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
