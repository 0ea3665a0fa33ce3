#include "collector/analysis/kernel_classifier.h"

#include <array>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/types/span.h"

namespace gpuspy::analysis {
namespace {

// Substrings (lower-case) that library kernel names carry when the math runs on tensor cores.
// Volta's HMMA kernels are "h884"/"s884" (8x8x4 MMA: half or float accumulate).
constexpr std::array<absl::string_view, 12> kTensorCoreMarkers = {
    "hmma",  "wgmma",  "gmma",  "tensorop", "xmma", "s1688",
    "s16816", "h1688", "h16816", "i8816",  "h884", "s884"};
// Reduced-precision types only imply tensor cores inside GEMM/conv kernels (an elementwise
// "cast_bf16" kernel does not use them).
constexpr std::array<absl::string_view, 3> kTensorCoreTypes = {"bf16", "f16", "tf32"};
constexpr std::array<absl::string_view, 3> kMathKernels = {"gemm", "conv", "matmul"};
// FP32 GEMM/conv on CUDA cores (SIMT) when no tensor-core marker is present.
constexpr std::array<absl::string_view, 4> kSimtFp32Markers = {"sgemm", "scudnn", "gemmsn",
                                                               "gemv2t"};
// cuBLAS/CUTLASS kernels that say outright their math is FP32 FMA on CUDA cores, even inside an
// "xmma" family name ("sm80_xmma_gemm_f32f32_..._ffma_...", "cutlass_simt_sgemm_...").
constexpr std::array<absl::string_view, 2> kExplicitSimtMarkers = {"ffma", "_simt_"};

bool ContainsAny(absl::string_view text, absl::Span<const absl::string_view> needles) {
  for (absl::string_view n : needles) {
    if (absl::StrContains(text, n)) return true;
  }
  return false;
}

// A GEMM/conv kernel by name; "conv" inside "convert" (dtype conversion kernels) is not one.
bool IsMathKernel(absl::string_view lower) {
  for (absl::string_view n : kMathKernels) {
    for (size_t pos = lower.find(n); pos != absl::string_view::npos; pos = lower.find(n, pos + 1)) {
      if (n != "conv" || !absl::StartsWith(lower.substr(pos), "convert")) return true;
    }
  }
  return false;
}

}  // namespace

KernelClass ClassifyKernel(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(absl::string_view(name.data(), name.size()));
  if (absl::StrContains(lower, "nccl")) return KernelClass::kCommunication;
  if (IsMathKernel(lower) && ContainsAny(lower, kExplicitSimtMarkers) &&
      !ContainsAny(lower, kTensorCoreTypes)) {
    return KernelClass::kSimtFp32Gemm;
  }
  if (ContainsAny(lower, kTensorCoreMarkers)) return KernelClass::kTensorCoreMath;
  if (IsMathKernel(lower) && ContainsAny(lower, kTensorCoreTypes)) {
    return KernelClass::kTensorCoreMath;
  }
  if (ContainsAny(lower, kSimtFp32Markers)) return KernelClass::kSimtFp32Gemm;
  return KernelClass::kOther;
}

bool UsesTensorCores(std::string_view name) {
  return ClassifyKernel(name) == KernelClass::kTensorCoreMath;
}

}  // namespace gpuspy::analysis
