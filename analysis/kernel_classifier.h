// What a kernel's name says about how it computes. CUPTI reports no math mode or op type, but
// cuBLAS, cuDNN, CUTLASS, ATen, Triton, flash-attention and NCCL encode it in their kernel names.
// All name rules live in kernel_classifier.cc, in one ordered table.
#pragma once

#include <string>
#include <string_view>

namespace gpuspy::analysis {

enum class KernelClass {
  kOther,
  kTensorCoreMath,   // GEMM/conv on tensor cores: hmma, wgmma, h884, s1688, tensorop, xmma, gmma;
                     // MoE GEMMs (DeepGEMM, Marlin, Triton fused_moe), Inductor GEMM templates
  kSimtFp32Gemm,     // FP32 GEMM/conv on CUDA cores: sgemm/scudnn without a tensor-core marker
  kCommunication,    // NCCL collectives
  kFusedAttention,   // flash-attention, PyTorch SDPA (flash / mem-efficient), cuDNN attention
  kMemoryBound,      // elementwise, norm, softmax, reduction, copy-like: a memory pass each
  kTriton,           // torch.compile/Triton fusions: already fused, not "unfused elementwise"
};

KernelClass ClassifyKernel(std::string_view name);
bool UsesTensorCores(std::string_view name);
// A GEMM of either kind (what surrounds softmax in an unfused attention).
bool IsGemmClass(KernelClass c);
// A softmax kernel (memory-bound class): the middle of the unfused attention pattern.
bool IsSoftmaxKernel(std::string_view name);
// A memory-bound kernel that is already a fusion: a foreach/fused optimizer step
// (multi_tensor_apply_kernel: one launch for many tensors, what torch.optim's foreach=True and
// fused=True run; apex's and DeepSpeed's fused Adam/SGD/LAMB).
// Fusing it again saves nothing: it is no link of an unfused chain.
bool IsAlreadyFusedKernel(std::string_view name);

// Stable names used in reports: "gemm_tc", "gemm_fp32", "attention", "elementwise", "triton",
// "comm", "other".
std::string_view KernelClassName(KernelClass c);

// A short readable name for evidence: "void at::native::vectorized_elementwise_kernel<4,
// at::native::CUDAFunctor_add<float>, ...>(...)" -> "vectorized_elementwise_kernel<CUDAFunctor_add>".
std::string ShortKernelName(std::string_view name);

}  // namespace gpuspy::analysis
