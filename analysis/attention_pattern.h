// Attention computed op by op: GEMM → mask/scale → softmax → dropout/cast → GEMM. The
// unfused_attention detector finds the pattern and the what-if replay's fusion
// (replay/edits/kernel_fixes.cc) removes the same kernels, so both walk it with one bound.
#pragma once

namespace gpuspy::analysis {

// At most this many memory-bound kernels between a GEMM and the softmax (mask, scale,
// masked_fill) and between the softmax and the next GEMM (dropout, cast).
inline constexpr int kMaxKernelsBetweenAttentionParts = 3;

}  // namespace gpuspy::analysis
