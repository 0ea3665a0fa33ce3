// The HTML report's sections beyond the step table and the findings: what a colleague reading
// the page needs without the viewer. Each renders fields of the analysis' report protos as they
// are (JobSummary, StepReport); none computes a figure.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "gpuspy/v1/report.pb.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::exporters::html {

// One stacked bar of time parts (StepBreakdown.parts, RankSummary.median_parts) in the palette
// of the causes (viewer/palette/time_causes.h); each part carries its cause and ns.
std::string PartsBar(const google::protobuf::RepeatedPtrField<v1::TimePart>& parts, int64_t wall_ns);
// The causes' legend, from the same palette.
std::string CausesLegend();

// "Where each rank's step goes": per rank its median step parts as a bar, communication (waiting
// and transfer, the comm browns) named with its share. Empty without ranks.
std::string RanksSection(const v1::JobSummary& summary);

// "GPU time": the kernel classes (JobSummary.kernel_classes) as a bar in the classes' palette
// (viewer/palette/kernel_classes.h) and a table; communication is its own class.
std::string GpuTimeSection(const v1::JobSummary& summary);

// "Top kernels": JobSummary.top_kernels.
std::string TopKernelsSection(const v1::JobSummary& summary);

// "Hardware floor": the job's line (JobSummary.floor) and per step with work figures its floor,
// MFU and work buckets (StepReport.floor), in analysis/hardware/floor_text.h's words.
std::string FloorSection(const v1::JobSummary& summary, const v1::GetStepReportResponse& reports,
                         const std::map<uint64_t, std::string>& labels);

// "Memory": per step with memory known (StepReport.memory), reserved and allocated figures.
// Empty when no step has any.
std::string MemorySection(const v1::GetStepReportResponse& reports,
                          const std::map<uint64_t, std::string>& labels);

// "Step timeline": per rank, its steps in order, each as wide as its wall time and split into
// its parts, so a slow step or a growing wait shows at a glance.
std::string StepTimelineSection(const v1::GetStepReportResponse& reports,
                                const std::map<uint64_t, std::string>& labels);

}  // namespace gpuspy::exporters::html
