// What the GPU time is made of, in text (StepReport.kernel_classes / JobSummary.kernel_classes,
// from the analysis' kernel classifier).
#pragma once

#include <ostream>
#include <string>

#include "google/protobuf/repeated_ptr_field.h"
#include "gpuspy/v1/report.pb.h"

namespace gpuspy::cli {

using KernelClasses = google::protobuf::RepeatedPtrField<v1::KernelClassTime>;

// How many classes a step's line names; the rest are summed into "rest".
inline constexpr int kLineClasses = 4;

// "GPU time: gemm_tc 40% · elementwise 35% · attention 15% · other 6% · rest 4%"; "" when empty.
std::string GpuTimeLine(const KernelClasses& classes);

// The job summary's "where the GPU time goes" table: class, share, total, kernels.
void PrintGpuTimeTable(const KernelClasses& classes, std::ostream& out);

}  // namespace gpuspy::cli
