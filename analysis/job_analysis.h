// The job-level part of analysis, one function each for the collector (QueryEngine, events read
// back from storage) and `gpuspy analyze` (events of trace files in memory), so that both give the
// same reports for the same events: cross-step findings per process, then cross-rank findings,
// then the job summary with its ranks x steps matrix.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/rank_matrix.h"
#include "analysis/step_series.h"
#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

struct JobProcess {
  uint64_t process_id = 0;
  int32_t rank = -1;
  int32_t world_size = 0;  // <= 0: unknown
  int64_t clock_offset_ns = 0;
  std::string host;
  uint64_t event_count = 0;
  // The process's (first) GPU as its identity names it, for the hardware floor; "" unknown.
  std::string device_name = {};
  uint64_t device_memory_bytes = 0;
};

// `steps[process_id]`: each process's per-step analyses (AnalyzeStep, with memory before each
// step). Applies AnalyzeStepSeries per process, then AnalyzeRanks across `processes`; the fix
// hints name `job_id`. The processes in `later_stretch` have only a later stretch of their steps
// in `steps` (AnalyzeStepSeries's from_first_step = false).
void AnalyzeJobSteps(const std::string& job_id, const std::vector<JobProcess>& processes,
                     std::map<uint64_t, std::vector<StepAnalysis>>* steps,
                     const std::set<uint64_t>& later_stretch = {});

// The job summary of `reports` (every step of every process): SummarizeJob + AddRankMatrix.
v1::JobSummary SummarizeAnalyzedJob(const std::string& job_id,
                                    const std::vector<v1::StepReport>& reports,
                                    const std::vector<JobProcess>& processes);

}  // namespace gpuspy::analysis
