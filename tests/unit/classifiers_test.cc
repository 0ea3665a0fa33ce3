// Kernel and API classification by name.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/api_classifier.h"
#include "analysis/kernel_classifier.h"
#include "analysis/kernel_composition.h"

namespace gpuspy::analysis {
namespace {

void ExpectKernelClass(KernelClass want, const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    EXPECT_EQ(ClassifyKernel(n), want) << n;
    EXPECT_EQ(UsesTensorCores(n), want == KernelClass::kTensorCoreMath) << n;
  }
}

TEST(KernelClassifier, Fp32GemmWithoutTensorCoreMarkerIsSimt) {
  ExpectKernelClass(KernelClass::kSimtFp32Gemm,
                    {"sgemm", "ampere_sgemm_128x64_tn", "volta_sgemm_128x64_nn",
                     "maxwell_sgemm_128x128_raggedMn_nn", "AMPERE_SGEMM_64X64_NN",
                     "maxwell_scudnn_128x64_relu_interior_nn", "gemmSN_NN_kernel"});
}

TEST(KernelClassifier, XmmaKernelsThatSayFfmaRunOnCudaCores) {
  // cuBLAS's FP32 GEMMs on Ampere/Hopper keep the xmma family name but run FFMA (no TF32).
  EXPECT_EQ(ClassifyKernel("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_"
                           "warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"),
            KernelClass::kSimtFp32Gemm);
  EXPECT_EQ(ClassifyKernel("cutlass_simt_sgemm_128x128_8x2_nn_align1"), KernelClass::kSimtFp32Gemm);
  // With TF32 the same family is tensor-core math.
  EXPECT_EQ(ClassifyKernel("sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_stage3_"
                           "warpsize2x2x1_tensor16x8x8_execute_kernel__5x_cublas"),
            KernelClass::kTensorCoreMath);
}

TEST(KernelClassifier, TensorCoreMarkersMeanTensorCoreMath) {
  ExpectKernelClass(
      KernelClass::kTensorCoreMath,
      {"ampere_s1688gemm_fp16_128x128_ldg8_f2f_tn", "turing_h1688gemm_256x128_ldg8_tn",
       "ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_stages_64x3_tn",
       "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4",
       "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
       "segment_k_off_kernel__5x_cublas",
       "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::SM90_64x128x16_"
       "F32BF16BF16_SS, wgmma>>",
       "sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32",
       "volta_fp16_hmma_gemm_kernel", "ampere_int8_i8816gemm_int8_128x128_ldg16_nt",
       "sm90_gemm_gmma_bf16"});
}

TEST(KernelClassifier, VoltaHmmaKernelsUseTensorCores) {
  // Volta's tensor-core GEMMs are named h884 (half accumulate) and s884 (float accumulate).
  ExpectKernelClass(KernelClass::kTensorCoreMath,
                    {"volta_h884gemm_64x64_ldg8_nn", "volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_nn",
                     "volta_h884cudnn_256x64_ldg8_relu_exp_small_nhwc_tn"});
}

TEST(KernelClassifier, ReducedPrecisionTypeImpliesTensorCoresOnlyInMathKernels) {
  ExpectKernelClass(KernelClass::kTensorCoreMath,
                    {"gemm_bf16_kernel", "my_conv2d_f16_kernel", "batched_matmul_tf32"});
  // Casts and conversions mention the type but do no GEMM/conv.
  ExpectKernelClass(KernelClass::kOther,
                    {"void at::native::cast_bf16_kernel", "convert_f32_to_f16_kernel",
                     "void transformer_engine::convert_bf16<float>(float const*, bf16*)"});
}

TEST(KernelClassifier, NcclIsCommunicationEvenWithMathWords) {
  ExpectKernelClass(KernelClass::kCommunication,
                    {"ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                     "ncclKernel_AllGather_RING_LL_Sum_int8_t", "NCCL_reduce_scatter_bf16",
                     "ncclDevKernel_Generic_hmma_like_name"});
}

TEST(KernelClassifier, UnknownKernelsAreOther) {
  ExpectKernelClass(KernelClass::kOther,
                    {"", "memcpy32_post", "at::cuda::(anonymous namespace)::spin_kernel(long)",
                     "void fft2d_r2c_32x32<float, false, 5u, true>(float2*, float const*, int)"});
}

// Real kernel names, from the traces in ../shared/traces (A100: alexnet, DDP ResNet with NCCL,
// a recommender with fbgemm, torch.compile) and from PyTorch / flash-attention / CUTLASS / cuBLAS
// sources and builds, each with the class it must get.
struct NamedKernel {
  const char* name;
  KernelClass want;
};

constexpr NamedKernel kRealKernels[] = {
    // --- tensor-core GEMM/conv (cuBLAS, cuBLASLt, CUTLASS, cuDNN) ---
    {"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn", KernelClass::kTensorCoreMath},
    {"ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_stages_64x3_nn", KernelClass::kTensorCoreMath},
    {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>("
     "cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)",
     KernelClass::kTensorCoreMath},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas",
     KernelClass::kTensorCoreMath},
    {"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_"
     "stage4_warpsize2x2x1_g1_tensor16x8x8_alignc4_execute_kernel_cudnn",
     KernelClass::kTensorCoreMath},
    {"void cutlass_cudnn_infer::Kernel<cutlass_tensorop_s1688fprop_optimized_tf32_128x128_32x4_"
     "nhwc_align4>(cutlass_tensorop_s1688fprop_optimized_tf32_128x128_32x4_nhwc_align4::Params)",
     KernelClass::kTensorCoreMath},
    {"volta_h884gemm_64x128_ldg8_nn", KernelClass::kTensorCoreMath},
    {"cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_align8_"
     "warpspecialized_cooperative_epi_tma",
     KernelClass::kTensorCoreMath},
    // --- FP32 SIMT GEMM/conv ---
    {"ampere_sgemm_32x32_sliced1x4_tn", KernelClass::kSimtFp32Gemm},
    {"volta_sgemm_128x64_nn", KernelClass::kSimtFp32Gemm},
    {"cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1", KernelClass::kSimtFp32Gemm},
    {"ampere_sgemm_32x128_tn", KernelClass::kSimtFp32Gemm},
    // --- fused attention ---
    {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
     "cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, "
     "true, false, false, true, true, false>(Flash_fwd_params)",
     KernelClass::kFusedAttention},
    {"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, "
     "4, false, false, cutlass::half_t> >(pytorch_flash::Flash_fwd_params)",
     KernelClass::kFusedAttention},
    {"void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, "
     "4, 2, 2, false, false, cutlass::half_t> >(Flash_bwd_params)",
     KernelClass::kFusedAttention},
    {"void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, "
     "cutlass::bfloat16_t> >(Flash_fwd_params)",
     KernelClass::kFusedAttention},
    {"fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<"
     "cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
     KernelClass::kFusedAttention},
    {"fmha_cutlassB_f16_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<"
     "cutlass::arch::Sm80, cutlass::half_t, true, false, true, 64, 64, 64, false>::Params)",
     KernelClass::kFusedAttention},
    {"void cutlass::device_kernel<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, "
     "cute::tuple<cute::C<1>>, cute::tuple<cute::C<128>> > > >(...)",
     KernelClass::kFusedAttention},
    {"cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_3_64x64x128_4x1x1_kernel0_0",
     KernelClass::kFusedAttention},
    // --- Triton (torch.compile): already fused ---
    {"triton_poi_fused_add_cos_sin_0", KernelClass::kTriton},
    {"triton_per_fused_native_layer_norm_0", KernelClass::kTriton},
    {"triton_red_fused__softmax_1", KernelClass::kTriton},
    // Inductor's GEMM template: a GEMM, not a fusion (InductorGemmTemplatesAre… below).
    {"triton_tem_fused_mm_2", KernelClass::kTensorCoreMath},
    {"triton__0d1d2d3de4e", KernelClass::kTriton},
    // --- memory-bound: elementwise, norm, softmax, dropout, reduction, copy-like ---
    {"void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, "
     "float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2> >(int, "
     "at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<"
     "float> >, at::detail::Array<char*, 2>)",
     KernelClass::kMemoryBound},
    {"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::"
     "CUDAFunctor_add<float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> "
     "const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<"
     "float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::{lambda(int)"
     "#1})",
     KernelClass::kMemoryBound},
    {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::"
     "TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::"
     "{lambda(float)#1}, at::detail::Array<char*, 2> >(int, float)",
     KernelClass::kMemoryBound},
    {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
     "float, float const*, float const*, float const*, float*, float*, float*)",
     KernelClass::kMemoryBound},
    {"void at::native::(anonymous namespace)::LayerNormForwardCUDAKernel<float, float>(long, "
     "float const*, float const*, float const*, float const*, float const*, float*)",
     KernelClass::kMemoryBound},
    {"void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, "
     "float const*, float*, float*)",
     KernelClass::kMemoryBound},
    {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(long, "
     "long, float const*, float const*, float const*, float const*, float*, float*)",
     KernelClass::kMemoryBound},
    {"void (anonymous namespace)::softmax_warp_forward<c10::Half, c10::Half, float, 10, false, "
     "false>(c10::Half*, c10::Half const*, int, int, int, bool const*, int, bool)",
     KernelClass::kMemoryBound},
    {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
     "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
     KernelClass::kMemoryBound},
    {"void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned "
     "int, 1, 4, bool>(at::cuda::detail::TensorInfo<float, unsigned int>)",
     KernelClass::kMemoryBound},
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::Half, at::native::"
     "func_wrapper_t<c10::Half, at::native::sum_functor<c10::Half, float, c10::Half> > > >",
     KernelClass::kMemoryBound},
    {"void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, "
     "1>(float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float>)",
     KernelClass::kMemoryBound},
    {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
     "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlpha"
     "Functor<float, 2, 2, 0>, std::plus<float>, float>",
     KernelClass::kMemoryBound},
    {"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 32, true, 1, true>(cudnnTensor"
     "Struct, float const*, cudnnTensorStruct, float*)",
     KernelClass::kMemoryBound},
    {"void cudnn::bn_bw_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_bw_1C11_args<float>)",
     KernelClass::kMemoryBound},
    {"void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)"
     "2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)",
     KernelClass::kMemoryBound},
    {"void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float "
     "const*, long, long)",
     KernelClass::kMemoryBound},
    {"void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, float*, "
     "cublasLtEpilogue_t, int, float*, long)",
     KernelClass::kMemoryBound},
    {"void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned int, 2, "
     "2, -2, true>(at::cuda::detail::TensorInfo<float, unsigned int>)",
     KernelClass::kMemoryBound},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, "
     "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<int>, at::detail::Array<char*, "
     "1>)",
     KernelClass::kMemoryBound},
    // fbgemm's table-batched embeddings (sampled_rank-0/1: a recommender), whose lookups and
    // row-wise Adagrad updates gather and scatter rows: memory traffic, not math.
    {"split_embedding_codegen_forward_unweighted_kernel", KernelClass::kMemoryBound},
    {"void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<"
     "c10::Half, float, c10::Half, 2ul, 32>(at::GenericPackedTensorAccessor<float, 2ul, "
     "at::RestrictPtrTraits, long>, float, float, float, long)",
     KernelClass::kMemoryBound},
    {"split_embedding_codegen_grad_indice_weights_kernel", KernelClass::kMemoryBound},
    {"void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, int>::"
     "Policy800, false, long, int, int, int>(int*, int*, int*, int const*, long*, long const*, "
     "int*, int const*, int, int, int)",
     KernelClass::kMemoryBound},
    // --- communication ---
    {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
     KernelClass::kCommunication},
    {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
     KernelClass::kCommunication},
    {"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
     KernelClass::kCommunication},
};

TEST(KernelClassifier, RealKernelNamesGetTheirClass) {
  for (const NamedKernel& k : kRealKernels) {
    EXPECT_EQ(KernelClassName(ClassifyKernel(k.name)), KernelClassName(k.want)) << k.name;
  }
}

TEST(KernelClassifier, SoftmaxKernelsAreMemoryBoundSoftmax) {
  EXPECT_TRUE(IsSoftmaxKernel("void (anonymous namespace)::softmax_warp_forward<float>"));
  EXPECT_TRUE(IsSoftmaxKernel("void at::native::cunn_SoftMaxBackward<4, float>"));
  // Triton's fused softmax is compiled, not an eager softmax between GEMMs.
  EXPECT_FALSE(IsSoftmaxKernel("triton_red_fused__softmax_1"));
  EXPECT_FALSE(IsSoftmaxKernel("void flash_fwd_kernel<softmax_traits>"));
}

TEST(KernelClassifier, ShortNamesKeepTheOp) {
  EXPECT_EQ(ShortKernelName("void at::native::vectorized_elementwise_kernel<4, at::native::"
                            "CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int)"),
            "vectorized_elementwise_kernel<CUDAFunctor_add>");
  EXPECT_EQ(ShortKernelName("void at::native::vectorized_elementwise_kernel<4, at::native::"
                            "AUnaryFunctor<float, float, float, at::native::binary_internal::"
                            "MulFunctor<float> >, at::detail::Array<char*, 2> >(int)"),
            "vectorized_elementwise_kernel<MulFunctor>");
  EXPECT_EQ(ShortKernelName("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<"
                            "float, float>(int, float)"),
            "vectorized_layer_norm_kernel");
  EXPECT_EQ(ShortKernelName("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_"
                            "align4>(cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)"),
            "cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4");
  EXPECT_EQ(ShortKernelName("void at::native::vectorized_elementwise_kernel<4, at::native::"
                            "GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::"
                            "{lambda()#2}, at::detail::Array<char*, 2> >(int)"),
            "vectorized_elementwise_kernel<GeluCUDAKernelImpl>");
  EXPECT_EQ(ShortKernelName("ampere_sgemm_32x128_tn"), "ampere_sgemm_32x128_tn");
}

TEST(ApiClassifier, LaunchCalls) {
  for (const char* name :
       {"cudaLaunchKernel", "cudaLaunchKernel_v7000", "cudaLaunchKernel_ptsz_v7000",
        "__cudaLaunchKernel_v13000", "cudaLaunchKernelExC_v11060", "cudaLaunchCooperativeKernel",
        "cuLaunchKernel", "cuLaunchKernelEx", "cudaGraphLaunch", "cudaGraphLaunch_v10000",
        "cuGraphLaunch"}) {
    EXPECT_TRUE(IsLaunchApi(name)) << name;
  }
  for (const char* name : {"cudaMemcpyAsync", "cudaStreamSynchronize", "cudaGraphInstantiate",
                           "cudaGetLastError", "cuModuleLoad", "", "launchKernel"}) {
    EXPECT_FALSE(IsLaunchApi(name)) << name;
  }
}

TEST(ApiClassifier, BlockingCalls) {
  for (const char* name :
       {"cudaStreamSynchronize", "cudaStreamSynchronize_v3020", "cudaDeviceSynchronize",
        "cudaDeviceSynchronize_v3020", "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpy_v3020",
        "cudaMemcpy2D_v3020", "cudaMemset_v3020", "cudaFree", "cudaFree_v3020", "cudaFreeHost",
        "cuMemFree_v2", "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2", "cuCtxSynchronize",
        "cuStreamSynchronize", "cudaMemcpyPeer"}) {
    EXPECT_TRUE(IsBlockingApi(name)) << name;
  }
}

TEST(ApiClassifier, BlockingCallsWithPerThreadDefaultStreamSuffixes) {
  // CUPTI runtime names: "_ptsz"/"_ptds" before the version; driver names: after it.
  for (const char* name :
       {"cudaStreamSynchronize_ptsz", "cudaStreamSynchronize_ptsz_v7000",
        "cudaMemcpy_ptds_v7000", "cudaMemset_ptds_v7000", "cuMemcpyDtoH_v2_ptds",
        "cuMemcpyHtoD_v2_ptds", "cuStreamSynchronize_ptsz"}) {
    EXPECT_TRUE(IsBlockingApi(name)) << name;
  }
}

TEST(ApiClassifier, AsyncAndNonSyncCallsAreNotBlocking) {
  for (const char* name :
       {"cudaMemcpyAsync", "cudaMemcpyAsync_v3020", "cudaMemcpyAsync_ptsz_v7000",
        "cuMemcpyDtoHAsync_v2", "cudaLaunchKernel", "cudaLaunchKernel_v7000",
        "cudaStreamWaitEvent", "cudaEventRecord", "cudaFreeAsync", "cudaMallocAsync",
        "cudaMemsetAsync", "cudaStreamQuery", "cudaMemcpyPeerAsync", "cudaMemcpy_v",
        "cudaMemcpy_vx12", "mycudaMemcpy", ""}) {
    EXPECT_FALSE(IsBlockingApi(name)) << name;
  }
}

// Kernels of large public training profiles (an H800 MoE run): CUTLASS 3 GEMMs by their
// template arguments, FP8 GEMMs, cuBLAS 12's nvjet kernels, DeepEP's all-to-all and NVSHMEM.
TEST(KernelClassifier, CutlassFp8AndDeepEpKernelsGetTheirClass) {
  for (const char* name :
       {"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int>, "
        "cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<4>, "
        "cutlass::bfloat16_t>>>(T1::Params)",
        "void cutlass::device_kernel<deep_gemm::GroupedGemmKernel<cutlass::float_e4m3_t>>(T1::Params)",
        "nvjet_tst_128x256_64x4_2x1_v_bz_TNT",
        "sm90_gemm_fp8_e4m3_128x128_tn"}) {
    EXPECT_EQ(ClassifyKernel(name), KernelClass::kTensorCoreMath) << name;
  }
  for (const char* name :
       {"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*)",
        "void deep_ep::internode::combine<true, 8>(int4*, float*)",
        "void nvshmemi_transfer_rma_nbi_kernel(int)", "ncclDevKernel_AllGather_RING_LL"}) {
    EXPECT_EQ(ClassifyKernel(name), KernelClass::kCommunication) << name;
  }
  // Near miss: a bf16 cast is no GEMM; an FP32 CUTLASS SIMT GEMM is no tensor-core math.
  EXPECT_NE(ClassifyKernel("void at::native::cast_bf16_kernel<float>"), KernelClass::kTensorCoreMath);
  EXPECT_EQ(ClassifyKernel("cutlass_simt_sgemm_128x128_8x2_nn_align1"), KernelClass::kSimtFp32Gemm);
}

// Kernels of public ROCm training profiles (MI250/MI300): rocBLAS/hipBLASLt Tensile GEMMs by the
// data types their names state, Composable Kernel and MIOpen by "xdl"/"mfma" and their type words.
TEST(KernelClassifier, AmdKernelsGetTheirClass) {
  for (const char* name :
       {"Cijk_Ailk_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x32x128_MI16x16x1_SN_LDSB1_AFC0_GRVWA8_ISA950",
        "Cijk_Alik_Bljk_HHS_BH_MT64x256x32_MI16x16x16x1_SN_1LDSB0_GRVW8_WG32_4_1",
        "Cijk_Ailk_Bljk_F8F8S_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_CMS_SN_LDS",
        "Custom_Cijk_Ailk_Bljk_BBS_BH_Bias_SAV_UserArgs_MT128x128x64_MI16x16x1_UserArgs_shortname1_gfx950",
        "void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::half_t>>(...)",
        "gridwise_convolution_implicit_gemm_v4r4_xdlops_nchw_kcyx_nkhw",
        "igemm_fwd_gtcx_nhwc_fp16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64"}) {
    EXPECT_EQ(ClassifyKernel(name), KernelClass::kTensorCoreMath) << name;
  }
  // FP32 inputs: FP32 math, also where an FP32 MFMA runs it ("MI32x32x2").
  for (const char* name :
       {"Cijk_Ailk_Bljk_SB_MT64x64x8_SE_K1", "Cijk_Ailk_Bjlk_SS_BH_MT128x128x16_MI32x32x2x1_SN_GRVW4",
        "igemm_fwd_gtcx_nchw_fp32_bx0_ex1_bt64x64x16_wt32x32x2", "naive_conv_fwd_nchw_float_double_float",
        "miopenSp3AsmConv_v21_1_3_gfx9_fp32_stride1"}) {
    EXPECT_EQ(ClassifyKernel(name), KernelClass::kSimtFp32Gemm) << name;
  }
  // Near misses: "cijk_" inside another word is no Tensile kernel; a bf16 Tensile name cut before
  // its types is not judged by a type it does not show; float copies are no FP32 convolution.
  EXPECT_EQ(ClassifyKernel("mycijk_helper"), KernelClass::kOther);
  EXPECT_EQ(ClassifyKernel("Cijk_Ailk"), KernelClass::kOther);
  EXPECT_EQ(ClassifyKernel("void at::native::copy_kernel_float_to_half"), KernelClass::kMemoryBound);
  EXPECT_EQ(ClassifyKernel("rccl_AllReduce_RING_LL_Sum_bf16"), KernelClass::kCommunication);
}

// MoE GEMMs (issue 45). The first three names are copied from deepseek-ai/profile-data's
// train.json (an H800 DeepSeek-V3 training profile: EP64, DeepEP, FP8 grouped GEMMs); the others
// are what Kineto prints for the named kernels of each library, their function names and
// namespaces as in the source file cited, template arguments shortened.
TEST(KernelClassifier, MoeGroupedAndQuantisedGemmsAreTensorCoreMath) {
  for (const char* name : {
           "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel>("
           "dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel::Params)",
           "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel>("
           "dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel::Params)",
           "sm90_xmma_gemm_bf16f32_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
           "segment_k_off_kernel__5x_cublas",
           // DeepGEMM (deep_gemm/include/deep_gemm/impls/*.cuh), JIT-compiled per shape.
           "void deep_gemm::sm90_fp8_gemm_1d2d_impl<(cute::UMMA::Major)0, 0u, 4096u, 7168u, 8u, "
           "128u, 128u, 128u, (deep_gemm::GemmType)1, __nv_bfloat16>(float*, int*, unsigned int)",
           "void deep_gemm::sm100_fp8_fp4_gemm_1d1d_impl<(cute::UMMA::Major)0, 0u, 4096u>(int*)",
           "void deep_gemm::sm90_bf16_gemm_impl<(cute::UMMA::Major)0, 0u, 4096u, 7168u>(int*)",
           "void deep_gemm::fp8_gemm_kernel<4096u, 7168u, 128u, 128u, 128u, 8u, 5u, "
           "(deep_gemm::GemmType)1>(__nv_bfloat16*, float*, int*, unsigned int)",
           "void deep_gemm::sm100_fp8_fp4_mega_moe_impl<7168u, 2048u, 256u>(void*, float*, int*)",
           "void deep_gemm::sm90_fp8_mqa_logits<64u, 128u>(unsigned int, unsigned int, float*)",
           // CUTLASS 2 grouped GEMM (tgale96/grouped_gemm csrc/grouped_gemm.cu: GemmGrouped).
           "void cutlass::Kernel<cutlass::gemm::kernel::GemmGrouped<cutlass::gemm::threadblock::"
           "MmaMultistage<cutlass::gemm::GemmShape<128, 128, 32>, cutlass::bfloat16_t, "
           "cutlass::arch::OpClassTensorOp> > >(cutlass::gemm::kernel::GemmGrouped<>::Params)",
           // CUTLASS 3 grouped GEMM of torch._grouped_mm (aten/src/ATen/native/cuda/GroupMM.cu).
           "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::"
           "GroupProblemShape<cute::tuple<int, int, int> >, cutlass::gemm::collective::CollectiveMma<"
           "cutlass::gemm::MainloopSm90ArrayTmaGmmaWarpSpecializedCooperative<4>, "
           "cutlass::bfloat16_t> > >(T1::Params)",
           // Kineto leaves names over its kMaxSymbolSize mangled (pytorch/kineto PR #1142 quotes
           // this FP8 grouped GEMM, torch._scaled_grouped_mm's): the markers still show through.
           "_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalINS1_17GroupProblemShapeIN4cute5"
           "tupleIJlllEEEEENS1_10collective13CollectiveMmaINS1_39MainloopSm90ArrayTmaGmmaWarpSpecialized"
           "ILi12ENS6_IJNS5_1CILi2EEENSC_ILi1EEESE_EEENS1_55KernelPtrArrayTmaWarpSpecializedCooperative"
           "FP8FastAccumEEENS6_IJNSC_ILi128EEENSC_ILi16EEESI_EEENS_12float_e4m3_tEPNS6_IJlSE_NSC_ILi0EE"
           "EEEESL_SO_NS5_8TiledMMAINS5_8MMA_AtomIJNS5_4SM904GMMA30MMA_64x16x32_F32E4M3E4M3_SS_TN",
           // Marlin (vLLM csrc/quantization/gptq_marlin/marlin_template.h, csrc/moe/
           // marlin_moe_wna16/marlin_template.h, csrc/quantization/marlin/sparse/; the original
           // IST-DASLab kernel had no namespace).
           "void marlin::Marlin<(vllm::ScalarTypeId)5, (vllm::ScalarTypeId)3, 256, 1, 8, 8, true, "
           "4, 8, false>(int4 const*, int4 const*, int4*, int4*, int4 const*, int, int, int, int*)",
           "void marlin_moe_wna16::Marlin<(vllm::ScalarTypeId)5, 256, 1, 8, 8, true, 4, 8, false>("
           "int4 const*, int4 const*, int4*, int4*, int const*, float const*, int, int, int)",
           "void Marlin<256, 1, 8, 8, 4, 8>(int4 const*, int4 const*, int4*, int4 const*, int, int)",
           "void marlin_24::Marlin_24<4, 256, 1, 8, 8, 4, -1>(int4 const*, int4 const*, int4*, int)",
           // Triton MoE GEMMs, named by their Python functions: vLLM
           // (vllm/model_executor/layers/fused_moe/fused_moe.py, fused_batched_moe.py), SGLang
           // (sglang/srt/layers/moe/fused_moe_triton/fused_moe_triton_kernels.py), and
           // triton_kernels' matmul_ogs (its repr: base name, layouts, dtypes, blocks).
           "fused_moe_kernel", "fused_moe_kernel_gptq_awq", "batched_triton_kernel",
           "_matmul_ogs_NNT_bf16xbf16xmxfp4_128x256x64x1",
           "_p_matmul_ogs_NNT_bf16xfp8e4nvxmxfp4_128x256x128x1",
           // Composable Kernel's grouped GEMMs (device_grouped_gemm_xdl.hpp,
           // device_grouped_gemm_xdl_fixed_nk.hpp), also as a name without its template.
           "void ck::kernel_grouped_gemm_xdl<ck::GridwiseGemmMultipleD_xdl_cshuffle<ck::bhalf_t> >("
           "void const*, int)",
           "kernel_grouped_gemm_xdl_fixed_nk", "kernel_grouped_gemm_xdl"}) {
    EXPECT_EQ(KernelClassName(ClassifyKernel(name)), "gemm_tc") << name;
  }
}

// Near misses of the MoE GEMM rules: what runs beside the experts' GEMMs and names GEMMs or
// low-precision types without doing GEMM math.
TEST(KernelClassifier, MoeRoutingSetupAndLayoutKernelsAreNoGemms) {
  // One-block setup kernels that fill a grouped GEMM's pointer and shape arrays: PyTorch's
  // torch._grouped_mm (GroupMMCommon.cuh), vLLM's CUTLASS MoE (get_group_starts.cuh),
  // tgale96/grouped_gemm (fill_arguments.cuh, templated on GemmGrouped<…>::Arguments).
  for (const char* name :
       {"void at::cuda::detail::prepare_grouped_gemm_data<cutlass::bfloat16_t, cutlass::bfloat16_t, "
        "cutlass::bfloat16_t, float, cute::tuple<int, int, int> >(cutlass::bfloat16_t*, float*)",
        "void get_group_gemm_starts<cutlass::float_e4m3_t, cutlass::bfloat16_t, float>(long*, "
        "cutlass::float_e4m3_t**, cutlass::bfloat16_t**, float**)",
        "void grouped_gemm::FillArguments<false, cutlass::bfloat16_t, cutlass::bfloat16_t, "
        "cutlass::gemm::kernel::GemmGrouped<cutlass::bfloat16_t>::Arguments>(int, long const*)",
        "void grouped_gemm::IgnoreK0Problems<>(int, cutlass::gemm::kernel::GemmGrouped<"
        "cutlass::bfloat16_t>::Arguments)"}) {
    EXPECT_EQ(ClassifyKernel(name), KernelClass::kOther) << name;
  }
  // Layout kernels in GEMM libraries' namespaces: DeepGEMM's scale-factor transposes (smxx_layout
  // .cuh) were FP32 GEMMs by their "fp32", Machete's weight prepack a bf16 one.
  EXPECT_EQ(ClassifyKernel("void deep_gemm::transpose_fp32<128u, 64u, 4u>(float const*, float*, "
                           "unsigned int)"),
            KernelClass::kMemoryBound);
  EXPECT_EQ(ClassifyKernel("void deep_gemm::transpose_and_pack_fp32_into_ue8m0<128u, 32u, 4u>("
                           "float*, unsigned int*, unsigned int, unsigned int const*, unsigned int)"),
            KernelClass::kMemoryBound);
  EXPECT_FALSE(IsGemmClass(ClassifyKernel(
      "void deep_gemm::pack_fp32_into_ue8m0<128u, 4u>(float*, unsigned int*, unsigned int*)")));
  EXPECT_FALSE(IsGemmClass(ClassifyKernel(
      "void machete::prepack_B_kernel<128, machete::PrepackedLayoutBTemplate<cutlass::bfloat16_t, "
      "cutlass::uint4b_t, cutlass::gemm::KernelTmaWarpSpecializedCooperative> >(cutlass::uint4b_t*)")));
  // Marlin's weight repacks and helpers: not the function named Marlin.
  for (const char* name :
       {"void marlin::gptq_marlin_repack_kernel<256, 4, false>(unsigned int const*, unsigned int*)",
        "void marlin::awq_marlin_repack_kernel<256, 4>(unsigned int const*, unsigned int*, int)",
        "marlin_int4_fp8_preprocess_kernel_without_zp"}) {
    EXPECT_FALSE(IsGemmClass(ClassifyKernel(name))) << name;
  }
  // Token routing: memory-bound or small, never GEMM (vLLM csrc/moe/).
  for (const char* name :
       {"void vllm::moe::moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int)",
        "void vllm::moe::topkGatingSoftmax<8, 128, 4, 16, int>(float const*, bool const*, float*)",
        "void vllm::moe::moe_sum_kernel<c10::BFloat16, 2>(c10::BFloat16*, c10::BFloat16 const*, int)",
        // vLLM's inlined @triton.jit helper (never a kernel of its own) and a made-up name one
        // word off fused_moe_kernel.
        "moe_mmk", "fused_moe_lora_helper",
        // train.json: DeepSeek's FP8 casts and its grouped GEMM library's own transpose.
        "void dpsk::grouped_gemm::cuda::utils::transpose<512, 128, 4, 4>(unsigned char const*, "
        "unsigned char*, int, int, int, int)",
        "void cuda::per_token_cast_to_fp8_with_channels<__nv_bfloat16, 128, false, 128, false>("
        "__nv_bfloat16 const*, int, unsigned char*, float*, int, int, int, int, bool, float, "
        "__nv_fp8_interpretation_t)"}) {
    EXPECT_FALSE(IsGemmClass(ClassifyKernel(name))) << name;
  }
  // cuBLAS's split-K reduction names bf16 but is a reduction pass.
  EXPECT_EQ(ClassifyKernel("void splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, "
                           "__nv_bfloat16, true, false, false>(cublasSplitKParams<float>, float "
                           "const*, __nv_bfloat16 const*, __nv_bfloat16*)"),
            KernelClass::kMemoryBound);
}

// DeepEP's all-to-all in every mode stays communication beside the GEMMs it feeds: normal mode
// (train.json's internal build: dpsk::ep::internode), and low-latency mode, its own namespace
// (deep_ep csrc/kernels/internode_ll.cu).
TEST(KernelClassifier, DeepEpDispatchAndCombineStayCommunication) {
  for (const char* name :
       {"void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*, "
        "bool const*, int4 const*, float const*)",
        "void dpsk::ep::internode::dispatch<false, 8, true, 8>(int4*, float*, long*, float*)",
        "void deep_ep::internode_ll::dispatch<false, 8, 7168>(void*, float*, int*)",
        "void nccl_ep::internode_ll::combine<false, 8, 7168>(void*, float*, int*)"}) {
    EXPECT_EQ(ClassifyKernel(name), KernelClass::kCommunication) << name;
  }
}

// Inductor's max-autotune GEMM templates are GEMMs; its pointwise/reduction kernels, and
// templates that compute no GEMM, stay fused Triton kernels (which unfused_elementwise never
// counts as a fusion opportunity: it reads only the memory-bound class).
TEST(KernelClassifier, InductorGemmTemplatesAreGemmsItsFusionsStayTriton) {
  for (const char* name :
       {"triton_tem_fused_mm_2", "triton_tem_fused_addmm_1", "triton_tem_fused_bmm_7",
        "triton_tem_fused__to_copy_addmm_gelu_t_view_9",
        "triton_tem_fused__to_copy_convolution_repeat_unsqueeze_view_2"}) {
    EXPECT_EQ(ClassifyKernel(name), KernelClass::kTensorCoreMath) << name;
  }
  for (const char* name :
       {"triton_tem_fused_flex_attention_0", "triton_tem_fused_0", "triton_poi_fused_mm_0",
        "triton_per_fused_addmm_native_layer_norm_0", "triton_red_fused__softmax_1",
        // Made up: an op that contains "mm" is not the op mm.
        "triton_tem_fused_commit_0"}) {
    EXPECT_EQ(ClassifyKernel(name), KernelClass::kTriton) << name;
  }
}

// A synthetic MoE step (1 ms of kernels) through the step report's own path (ClassifiedKernels,
// KernelComposition): grouped FP8 GEMMs, Marlin and Triton MoE GEMMs and an Inductor template
// are 55 %, DeepEP 40 %. Before the MoE rules this step read gemm_tc 31 % (the DeepGEMM kernel and
// a setup kernel), "other" 20 %, "triton" 5 % and a 2 % "gemm_fp32" that was a transpose.
TEST(KernelComposition, MoeStepCountsItsExpertGemmsAsGemmTime) {
  constexpr int64_t kUs = 1000;
  const std::vector<std::pair<const char*, int64_t>> step = {
      {"void deep_gemm::sm90_fp8_gemm_1d2d_impl<(cute::UMMA::Major)0, 0u, 4096u, 7168u, 8u>(float*)",
       300},
      {"void marlin_moe_wna16::Marlin<(vllm::ScalarTypeId)5, 256, 1, 8, 8, true, 4, 8, false>(int)",
       100},
      {"fused_moe_kernel", 100},
      {"triton_tem_fused_mm_0", 50},
      {"void deep_ep::internode_ll::dispatch<false, 8, 7168>(void*, float*, int*)", 200},
      {"void deep_ep::internode_ll::combine<false, 8, 7168>(void*, float*, int*)", 200},
      {"void deep_gemm::transpose_fp32<128u, 64u, 4u>(float const*, float*, unsigned int)", 20},
      {"void vllm::moe::topkGatingSoftmax<8, 128, 4, 16, int>(float const*, float*)", 10},
      {"void at::cuda::detail::prepare_grouped_gemm_data<cutlass::bfloat16_t>(float*)", 10},
      {"void vllm::moe::moe_align_block_size_kernel<int>(int const*, int*, int)", 10},
  };
  StringTable strings;
  EventColumns events;
  int64_t at = 0;
  for (const auto& [name, us] : step) {
    KernelEvent& k = events.kernels.emplace_back();
    k.name = strings.Intern(name);
    k.start_ns = at;
    k.end_ns = at + us * kUs;
    at = k.end_ns;
  }
  KernelClasses classes;
  const std::vector<v1::KernelClassTime> shares =
      KernelComposition(ClassifiedKernels(events, strings, {0, at}, classes));
  std::map<std::string, double> share_of;
  for (const v1::KernelClassTime& c : shares) share_of[c.kernel_class()] = c.share();
  EXPECT_DOUBLE_EQ(share_of["gemm_tc"], 0.55);
  EXPECT_DOUBLE_EQ(share_of["comm"], 0.40);
  EXPECT_DOUBLE_EQ(share_of["elementwise"], 0.03);
  EXPECT_DOUBLE_EQ(share_of["other"], 0.02);
  EXPECT_EQ(share_of.count("gemm_fp32"), 0u);
  EXPECT_EQ(share_of.count("triton"), 0u);
}

// What the GPU's busy time is made of: a collective running beside compute takes none of
// compute's time (only its exposed part is comm's), two compute streams share the time they
// overlap, and the shares add up to the busy time. Serial kernels keep their durations.
TEST(KernelComposition, ACollectiveBesideComputeTakesOnlyItsExposedTime) {
  constexpr int64_t kUs = 1000;
  StringTable strings;
  EventColumns events;
  const auto add = [&](const char* name, int64_t start_us, int64_t end_us) {
    KernelEvent& k = events.kernels.emplace_back();
    k.name = strings.Intern(name);
    k.start_ns = start_us * kUs;
    k.end_ns = end_us * kUs;
  };
  add("void deep_ep::intranode::dispatch<8>(void*)", 0, 1000);          // the whole step, beside:
  add("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_kernel", 0, 400);
  add("void at::native::vectorized_elementwise_kernel<4, add>(int)", 200, 800);  // overlaps it
  KernelClasses classes;
  std::map<std::string, const v1::KernelClassTime*> of;
  const std::vector<v1::KernelClassTime> shares =
      KernelComposition(ClassifiedKernels(events, strings, {0, 1000 * kUs}, classes));
  for (const v1::KernelClassTime& c : shares) of[c.kernel_class()] = &c;
  ASSERT_EQ(of.size(), 3u);
  EXPECT_EQ(of["gemm_tc"]->ns(), 300 * kUs);      // [0,200) + half of [200,400)
  EXPECT_EQ(of["elementwise"]->ns(), 500 * kUs);  // half of [200,400) + [400,800)
  EXPECT_EQ(of["comm"]->ns(), 200 * kUs);         // [800,1000): exposed only
  EXPECT_EQ(of["comm"]->count(), 1u);
  EXPECT_DOUBLE_EQ(of["gemm_tc"]->share() + of["elementwise"]->share() + of["comm"]->share(), 1.0);

  // Near miss: the same kernels one after another keep their durations.
  EventColumns serial;
  int64_t at = 0;
  for (const KernelEvent& k : events.kernels) {
    KernelEvent& s = serial.kernels.emplace_back(k);
    s.start_ns = at;
    s.end_ns = at + (k.end_ns - k.start_ns);
    at = s.end_ns;
  }
  std::map<std::string, int64_t> ns;
  for (const v1::KernelClassTime& c : KernelComposition(ClassifiedKernels(serial, strings, {0, at}, classes))) {
    ns[c.kernel_class()] = c.ns();
  }
  EXPECT_EQ(ns["comm"], 1000 * kUs);
  EXPECT_EQ(ns["gemm_tc"], 400 * kUs);
  EXPECT_EQ(ns["elementwise"], 600 * kUs);
}

// Kineto on ROCm records the HIP runtime, which mirrors CUDA's one to one: the same rules.
TEST(ApiClassifier, HipCallsAreTheirCudaTwins) {
  for (const char* name : {"hipLaunchKernel", "hipExtLaunchKernel", "hipModuleLaunchKernel",
                           "hipExtModuleLaunchKernel", "hipGraphLaunch", "hipLaunchCooperativeKernel"}) {
    EXPECT_TRUE(IsLaunchApi(name)) << name;
  }
  for (const char* name : {"hipDeviceSynchronize", "hipStreamSynchronize", "hipEventSynchronize",
                           "hipMemcpy", "hipMemset", "hipFree"}) {
    EXPECT_TRUE(IsBlockingApi(name)) << name;
  }
  for (const char* name : {"hipMemcpyAsync", "hipLaunchKernel", "hipStreamWaitEvent", "hipMalloc"}) {
    EXPECT_FALSE(IsBlockingApi(name)) << name;
  }
  EXPECT_TRUE(IsFreeApi("hipFree"));
  EXPECT_EQ(DriverWorkOf("hipMalloc", 1'000'000), DriverWork::kAllocation);
  EXPECT_EQ(DriverWorkOf("hipHostMalloc", 1'000'000), DriverWork::kAllocation);
  EXPECT_EQ(CudaApiName("hipModuleLaunchKernel").view(), "cuLaunchKernel");
  EXPECT_EQ(CudaApiName("cudaMemcpy").view(), "cudaMemcpy");  // anything else is itself
  EXPECT_EQ(CudaApiName("hip").view(), "cuda");
}

}  // namespace
}  // namespace gpuspy::analysis
