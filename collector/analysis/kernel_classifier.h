// What a kernel's name says about how it computes. CUPTI reports no math mode, but cuBLAS,
// cuDNN and CUTLASS encode it in their kernel names.
#pragma once

#include <string_view>

namespace gpuspy::analysis {

enum class KernelClass {
  kOther,
  kTensorCoreMath,  // GEMM/conv on tensor cores: hmma, wgmma, h884, s1688, tensorop, xmma, gmma
  kSimtFp32Gemm,    // FP32 GEMM/conv on CUDA cores: sgemm/scudnn without a tensor-core marker
  kCommunication,   // NCCL collectives
};

KernelClass ClassifyKernel(std::string_view name);
bool UsesTensorCores(std::string_view name);

}  // namespace gpuspy::analysis
