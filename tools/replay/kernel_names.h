// Real kernel names from PyTorch/cuBLAS/cuDNN/NCCL traces (long, templated, repeated), and the
// streams and time units the synthetic timelines use.
#pragma once

#include <cstdint>

namespace gpuspy::synthetic {

inline constexpr int64_t kUs = 1000;
inline constexpr int64_t kMs = 1000 * kUs;
inline constexpr uint32_t kComputeStream = 7;
inline constexpr uint32_t kNcclStream = 13;
// A side stream for copies overlapped with compute (the copy_heavy scenario's fixed twin).
inline constexpr uint32_t kCopyStream = 17;
inline constexpr uint32_t kContext = 1;
// CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0: the kind PyTorch's profiler (Kineto) pushes its op ids
// under, one per CUDA call made inside an op.
inline constexpr uint32_t kExternalKindCustom0 = 3;

inline constexpr const char* kTensorCoreGemms[] = {
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x10_tn_align8>"
    "(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x10_tn_align8::Params)",
    "sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_"
    "warpsize2x2x1_g1_tensor16x8x16_kernel",
};
inline constexpr const char* kSimtGemms[] = {
    "ampere_sgemm_128x64_tn",
    "ampere_sgemm_64x32_sliced1x4_nn",
    "volta_sgemm_128x32_nt",
};
inline constexpr const char* kElementwise[] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::"
    "TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::"
    "operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, float, "
    "at::detail::Array<char*, 2>)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
    "float, float const*, float const*, float const*, float*, float*, float*)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<"
    "float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, "
    "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
};
// An eager transformer layer's memory-bound tail after a GEMM: each kernel a full memory pass.
inline constexpr const char* kMlpTail[] = {
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>("
    "int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, "
    "c10::BFloat16*)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::"
    "TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::"
    "operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, "
    "c10::BFloat16, at::detail::Array<char*, 2>)",
    "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::BFloat16, float, "
    "unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, "
    "at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, unsigned int, float)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::"
    "BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "at::detail::Array<char*, 3>)",
};
// Eager attention: matmul(q, k^T) → masked_fill → softmax → dropout → matmul(p, v).
inline constexpr const char* kBatchedGemm =
    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn";
inline constexpr const char* kMaskedFill =
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::"
    "masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() "
    "const::{lambda()#10}::operator()() const::{lambda(c10::BFloat16, bool)#1}> >(int)";
inline constexpr const char* kSoftmax =
    "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 9, "
    "false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)";
// torch.compile (Inductor): an MLP layer's LayerNorm → GELU → dropout → add tail as one kernel.
inline constexpr const char* kTritonFusedTail =
    "triton_per_fused_add_gelu_native_dropout_native_layer_norm_0";
// scaled_dot_product_attention's flash backend: bmm → mask → softmax → dropout → bmm in one kernel.
inline constexpr const char* kFlashAttention =
    "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
    "cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, true, false, "
    "false, false, true, true, false>(pytorch_flash::Flash_fwd_params)";
inline constexpr const char* kOptimizer =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<"
    "float, 4>, float*, float, float, float, float, float, float, bool, bool>";
inline constexpr const char* kAutotune = "cudnn::autotune::find_best_algo_kernel_";
// NCCL picks the low-latency protocol for small messages, SIMPLE for large ones.
inline constexpr const char* kNcclAllReduceLL =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
inline constexpr const char* kNcclAllReduceSimple =
    "ncclDevKernel_AllReduce_Sum_f32_RING_SIMPLE(ncclDevComm*, unsigned long, ncclWork*)";

}  // namespace gpuspy::synthetic
