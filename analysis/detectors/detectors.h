// The per-step detectors, one file each. Thresholds are named constants at the top of each file
// and documented in docs/detectors.md.
#pragma once

#include <optional>
#include <vector>

#include "analysis/detectors/step_context.h"

namespace gpuspy::analysis {

std::optional<v1::Finding> DetectSyncStall(const StepContext& ctx);
// "Tiny": a kernel shorter than this is mostly launch and ramp-up (launch_storm; the replay's
// fused-launch edit).
inline constexpr int64_t kShortKernelNs = 20'000;
std::optional<v1::Finding> DetectLaunchStorm(const StepContext& ctx);
std::optional<v1::Finding> DetectCopyDominated(const StepContext& ctx);
std::optional<v1::Finding> DetectInputStall(const StepContext& ctx);
std::optional<v1::Finding> DetectHostBound(const StepContext& ctx);
// GPU idle inside driver work, of the step's wall, from which cuda_api_bound fires (and below
// which merge_findings.cc drops what is left of it).
inline constexpr double kMinCudaCallShare = 0.10;
std::optional<v1::Finding> DetectCudaApiBound(const StepContext& ctx);
std::optional<v1::Finding> DetectFp32Gemm(const StepContext& ctx);
std::optional<v1::Finding> DetectAllocChurn(const StepContext& ctx);
std::optional<v1::Finding> DetectUnfusedElementwise(const StepContext& ctx);
std::optional<v1::Finding> DetectUnfusedAttention(const StepContext& ctx);
std::optional<v1::Finding> DetectGpuBound(const StepContext& ctx);
// Run only when no other detector fired: GPU idle that none explains is still reported, so a
// step never looks healthy by omission.
std::optional<v1::Finding> DetectGpuIdle(const StepContext& ctx);

// After the per-step detectors: a cost two of them name from two angles is counted once
// (merge_findings.cc says which keeps it).
void MergeOverlappingFindings(const StepContext& ctx, std::vector<v1::Finding>* findings);
// After the cross-rank detectors: a straggler whose cause is its input pipeline or its syncs
// absorbs the rank's input_stall or sync_stall (one cost, one finding).
void MergeStragglerCause(std::vector<v1::Finding>* findings);

}  // namespace gpuspy::analysis
