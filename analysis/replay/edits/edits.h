// The edit each detector's fix hint describes (docs/detectors.md, "What-if replay"): what the
// step would look like with the fix in place, replayed to give the finding's lost_ns. Each edit
// is a pure function of the step and its graph; its model's assumptions are named constants.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/detectors/step_context.h"
#include "analysis/replay/replay.h"
#include "analysis/replay/step_graph.h"

namespace gpuspy::analysis::replay {

struct Fix {
  std::string description;  // the fix replayed, in words (v1::WhatIf.fix)
  StepEdit edit;
};

// ---- The models' assumptions -------------------------------------------------------------
// A call the fix makes cheap costs what a cached allocation or an async enqueue costs.
inline constexpr int64_t kCheapCallNs = 2'000;
// Copies of at least this size are copy_dominated's (pin them, overlap them); smaller blocking
// copies are reads of values (.item(), .cpu() of a scalar): sync_stall's.
inline constexpr uint64_t kMinEditedCopyBytes = 1ull << 20;
// Pinned host<->device bandwidth when the run has no large pinned copy to measure it from:
// PCIe 4.0 x16 in practice (a conservative figure for PCIe 5.0 parts too).
inline constexpr double kDefaultPinnedBytesPerNs = 20.0;  // 20 GB/s
// Pinned copies at least this large measure the run's pinned bandwidth.
inline constexpr uint64_t kMinMeasuredCopyBytes = 1ull << 20;
// A kernel's fixed cost (ramp-up and tail of its blocks): paid once per fused launch; the rest
// of each tiny kernel's time (its memory traffic) stays in the fused kernel.
inline constexpr int64_t kKernelFixedCostNs = 2'000;
// Tiny kernels fused per launch (a foreach / multi_tensor_apply launch covers a chunk of tensors).
inline constexpr int kKernelsPerFusedLaunch = 128;
// The host's per-op cost (Python + ATen dispatch, the loop's own overhead) before each launch
// that a fusion removes goes with it. The ops a fusion replaces come from one loop or one module,
// whose iterations cost about the same: host work before a launch is per-op cost when it is at
// most kMaxPerOpHostNs, or at most kPerOpSpread times the median of the fused ops' host work
// (a per-parameter loop in Python costs more per op than a module's forward). Longer host work
// is the program's: of it, only the median per-op cost goes.
inline constexpr int64_t kMaxPerOpHostNs = 50'000;
inline constexpr double kPerOpSpread = 2.0;
// FP32 SIMT GEMMs under TF32/BF16 tensor cores: a conservative speedup on Ampere/Hopper.
inline constexpr double kTensorCoreSpeedup = 2.0;

// ---- The edits ------------------------------------------------------------------------------
// sync_stall: the blocking calls (syncs, reads of values; not allocator calls or large copies)
// return at once.
std::optional<Fix> SyncFix(const StepContext& ctx, const StepGraph& g);
// host_bound: the named host range costs nothing, or, when no range names the work, the host
// work the GPU waited for.
std::optional<Fix> HostWorkFix(const StepContext& ctx, const StepGraph& g);
// input_stall: data loading is hidden behind the previous step (its host time costs nothing).
std::optional<Fix> InputFix(const StepContext& ctx, const StepGraph& g);
// copy_dominated: large copies from pinned memory, non_blocking, on a side stream nothing in the
// step waits for. PinnedCopyFix: only pinned (still synchronous, still in stream order).
std::optional<Fix> CopyFix(const StepContext& ctx, const StepGraph& g);
std::optional<Fix> PinnedCopyFix(const StepContext& ctx, const StepGraph& g);
// launch_storm: runs of tiny kernels become one fused launch per kKernelsPerFusedLaunch.
std::optional<Fix> LaunchStormFix(const StepContext& ctx, const StepGraph& g);
// alloc_churn: allocator calls cost a cached allocation. cuda_api_bound: so do the driver calls.
std::optional<Fix> AllocatorFix(const StepContext& ctx, const StepGraph& g);
std::optional<Fix> DriverCallFix(const StepContext& ctx, const StepGraph& g);
// fp32_gemm: SIMT FP32 GEMMs run kTensorCoreSpeedup times faster.
std::optional<Fix> TensorCoreFix(const StepContext& ctx, const StepGraph& g);
// unfused_elementwise: each chain of memory-bound kernels is one memory pass (chain time / L).
std::optional<Fix> ElementwiseFusionFix(const StepContext& ctx, const StepGraph& g);
// unfused_attention: the memory-bound passes between the attention GEMMs go (fused attention
// keeps the scores on chip; the GEMMs' math stays).
std::optional<Fix> AttentionFusionFix(const StepContext& ctx, const StepGraph& g);

// The fix `detector`'s finding names, nullopt when it states none (its lost_ns stays what the
// idle attribution gives) or the step has nothing to edit.
std::optional<Fix> FixFor(v1::Detector detector, const StepContext& ctx, const StepGraph& g);
// Cheaper, partial fixes of the same cause.
std::vector<Fix> PartialFixesFor(v1::Detector detector, const StepContext& ctx,
                                 const StepGraph& g);

// ---- Helpers the edits share ----------------------------------------------------------------
// The launch call of op `i` ({thread, call}).
std::pair<int, int> LaunchOf(const StepGraph& g, int i);
// Makes the calls that launched only `ops` free, and removes the host's per-op work before them
// (kMaxPerOpHostNs, kPerOpSpread), except for the op `keep` (the fused launch).
void DropLaunches(const StepGraph& g, const std::vector<int>& ops, int keep, StepEdit* edit);
// The graph's launched kernels per stream in stream order (carried ones left out).
std::vector<std::vector<int>> KernelsByStream(const StepGraph& g);

}  // namespace gpuspy::analysis::replay
