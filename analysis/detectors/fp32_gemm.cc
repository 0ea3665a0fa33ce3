// FP32 GEMM/conv without tensor cores: cuBLAS/cuDNN kernels whose names show SIMT FP32 math
// (sgemm, scudnn) dominate compute while tensor cores sit unused.
#include <algorithm>
#include <map>
#include <vector>

#include "analysis/detectors/detectors.h"
#include "analysis/kernel_classifier.h"

namespace gpuspy::analysis {
namespace {

constexpr double kMinSimtShareOfKernels = 0.20;
// TF32 runs FP32 GEMMs several times faster on Ampere/Hopper; assume a conservative 2x, so half
// of the SIMT GEMM time is counted as lost.
constexpr double kAssumedTensorCoreSpeedup = 2.0;

}  // namespace

std::optional<v1::Finding> DetectFp32Gemm(const StepContext& ctx) {
  int64_t simt_ns = 0, tensor_ns = 0, kernel_ns = 0;
  std::map<StringRef, int64_t> simt_by_name;
  for (const KernelEvent& k : ctx.events.kernels) {
    if (!ctx.InWindow(k.start_ns, k.end_ns)) continue;
    const int64_t d = k.end_ns - k.start_ns;
    kernel_ns += d;
    switch (ctx.classes.Of(ctx.strings, k.name)) {
      case KernelClass::kSimtFp32Gemm:
        simt_ns += d;
        simt_by_name[k.name] += d;
        break;
      case KernelClass::kTensorCoreMath:
        tensor_ns += d;
        break;
      default:
        break;
    }
  }
  if (kernel_ns == 0 || static_cast<double>(simt_ns) / kernel_ns < kMinSimtShareOfKernels) {
    return std::nullopt;
  }
  const int64_t lost = static_cast<int64_t>(simt_ns * (1.0 - 1.0 / kAssumedTensorCoreSpeedup));
  std::vector<std::pair<int64_t, StringRef>> ranked;
  for (const auto& [name, ns] : simt_by_name) ranked.emplace_back(ns, name);
  std::sort(ranked.rbegin(), ranked.rend());

  v1::Finding f;
  f.set_detector(v1::fp32_gemm);
  f.set_title("FP32 GEMMs on CUDA cores take " + FormatMs(simt_ns) + " (" +
              FormatPercent(static_cast<double>(simt_ns) / kernel_ns) +
              " of kernel time); tensor cores are unused for them");
  f.set_lost_ns(lost);
  f.set_severity(SeverityFor(ctx.ShareOfWall(lost)));
  AddEvidence(&f, "simt_fp32_gemm_time", Ns(simt_ns));
  AddEvidence(&f, "tensor_core_time", Ns(tensor_ns));
  for (size_t i = 0; i < ranked.size() && i < 3; ++i) {
    AddEvidence(&f, "kernel", std::string(ctx.strings.Get(ranked[i].second)) + " = ",
                Ns(ranked[i].first));
  }
  f.set_fix_hint(
      "enable TF32 (torch.backends.cuda.matmul.allow_tf32 = True or "
      "torch.set_float32_matmul_precision('high')), or train with AMP "
      "(torch.autocast(dtype=torch.bfloat16)); keep GEMM dimensions multiples of 8");
  return f;
}

}  // namespace gpuspy::analysis
