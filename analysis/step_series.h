// Detectors that need more than one step of one process: warm-up and outlier steps, kernels that
// appear mid-run (recompiles), memory that grows step over step. Across ranks: cross_rank_analysis.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/comm/step_collectives.h"
#include "analysis/kernel_classes.h"
#include "analysis/memory_usage.h"
#include "analysis/step_segmenter.h"
#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

// One process's step as the series analysis sees it.
struct StepAnalysis {
  v1::StepReport report;
  std::vector<std::string> kernel_names;  // distinct kernel names of the step
  // For the cross-rank analysis; shared, not copied, when cached analyses are handed out (a big
  // job holds thousands of collectives per step).
  std::shared_ptr<const StepCollectives> collectives = std::make_shared<const StepCollectives>();
  // Device memory in the step and since the previous one (`memory.before`: the caller measures
  // it, as only it can read outside the step); AnalyzeStepSeries turns it into report.memory.
  StepMemoryInput memory;
};

// One step of one process analysed on its own: report (breakdown, per-step findings), kernel
// names and collectives. `events` overlap the step window (more is fine). `classes` (optional):
// the process's kernel classes, shared by its steps (AnalyzeProcess keeps one).
StepAnalysis AnalyzeStep(const EventColumns& events, const StringTable& strings,
                         const StepWindow& step, uint64_t process_id,
                         KernelClasses* classes = nullptr);

// Sets each step's device memory levels (report.memory), marks warm-up/outlier steps
// (steady_state = false, with a finding), flags steps where new kernel names appear after
// warm-up, and adds memory_growth findings (detectors/memory_growth.h). `steps` is one
// process's steps in step order. `from_first_step` false: `steps` are a later stretch of the
// process's steps (a live job's recent steps), so none of them is its first window or a warm-up
// step, and the median they are measured against is the stretch's.
void AnalyzeStepSeries(std::vector<StepAnalysis>* steps, bool from_first_step = true);

// Re-sorts findings by lost time and sets primary_bottleneck after findings were added.
void RankFindings(v1::StepReport* report);

// A finding whose fix the replay prices (Finding.what_if) at less than this share of the step is
// no verdict: it ranks after every other finding, so that a description of the step (gpu_bound:
// the GPU busy through it) or any cause with a gain leads. Removing host work the GPU's work
// overlaps saves nothing, and a bottleneck that saves nothing when fixed is not the one to act
// on. When it is the only finding it still leads: the step shows that cause, and its what-if
// says it saves nothing. Findings without a replayed gain (gpu_bound, memory_growth, the
// communication findings) keep their rank.
inline constexpr double kMinVerdictGainShare = 0.005;
bool IsVerdict(const v1::Finding& f, int64_t wall_ns);

}  // namespace gpuspy::analysis
