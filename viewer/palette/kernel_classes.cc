#include "viewer/palette/kernel_classes.h"

#include <array>

#include "nlohmann/json.hpp"

namespace gpuspy::palette {
namespace {

// Tableau 20's lighter and darker shades: near the causes' Tableau 10 hues where the meaning is
// near (matrix maths in compute's blues), never one of them (time_causes.cc; a unit test checks).
constexpr std::array<KernelClassStyle, 7> kStyles = {{
    {"gemm_tc", "GEMM (tensor cores)", "#2f5d8a"},
    {"gemm_fp32", "GEMM (FP32, CUDA cores)", "#86acd6"},
    {"attention", "fused attention", "#59a14f"},
    {"elementwise", "memory-bound (elementwise/norm/softmax/copy)", "#ff9da7"},
    {"triton", "Triton (compiled, fused)", "#d4a6c8"},
    {"comm", "communication", "#8f6d5a"},
    {"other", "other", "#d7d2cc"},
}};

}  // namespace

std::span<const KernelClassStyle> KernelClassStyles() { return kStyles; }

const KernelClassStyle& StyleOfClass(std::string_view kernel_class) {
  for (const KernelClassStyle& s : kStyles) {
    if (kernel_class == s.key) return s;
  }
  return kStyles.back();
}

std::string KernelClassesJs() {
  nlohmann::json classes = nlohmann::json::object();
  for (const KernelClassStyle& s : kStyles) classes[s.key] = {{"label", s.label}, {"color", s.color}};
  return "export const KERNEL_CLASSES = Object.freeze(" + classes.dump() + ");\n";
}

}  // namespace gpuspy::palette
