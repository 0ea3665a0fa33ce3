#include "viewer/palette/kernel_classes.h"

#include <array>

namespace gpuspy::palette {
namespace {

// Moved from the viewer's gpu_time.js (Tableau 10, as the time causes).
constexpr std::array<KernelClassStyle, 7> kClasses = {{
    {"gemm_tc", "GEMM (tensor cores)", "#4e79a7"},
    {"gemm_fp32", "GEMM (FP32, CUDA cores)", "#86bcb6"},
    {"attention", "fused attention", "#59a14f"},
    {"elementwise", "memory-bound (elementwise/norm/softmax/copy)", "#e15759"},
    {"triton", "Triton (compiled, fused)", "#b07aa1"},
    {"comm", "communication", "#9c4f2b"},
    {"other", "other", "#bab0ac"},
}};

}  // namespace

std::span<const KernelClassStyle> KernelClassStyles() { return kClasses; }

const KernelClassStyle& StyleOfClass(std::string_view kernel_class) {
  for (const KernelClassStyle& s : kClasses) {
    if (kernel_class == s.key) return s;
  }
  return kClasses.back();
}

}  // namespace gpuspy::palette
