// The per-step detectors, one file each. Thresholds are named constants at the top of each file
// and documented in docs/detectors.md.
#pragma once

#include <optional>

#include "collector/analysis/detectors/step_context.h"

namespace gpuspy::analysis {

std::optional<v1::Finding> DetectSyncStall(const StepContext& ctx);
std::optional<v1::Finding> DetectLaunchStorm(const StepContext& ctx);
std::optional<v1::Finding> DetectCopyDominated(const StepContext& ctx);
std::optional<v1::Finding> DetectInputStall(const StepContext& ctx);
std::optional<v1::Finding> DetectHostBound(const StepContext& ctx);
std::optional<v1::Finding> DetectCudaApiBound(const StepContext& ctx);
std::optional<v1::Finding> DetectFp32Gemm(const StepContext& ctx);
std::optional<v1::Finding> DetectAllocChurn(const StepContext& ctx);
std::optional<v1::Finding> DetectUnfusedElementwise(const StepContext& ctx);
std::optional<v1::Finding> DetectUnfusedAttention(const StepContext& ctx);
std::optional<v1::Finding> DetectGpuBound(const StepContext& ctx);

}  // namespace gpuspy::analysis
