// Kernel and API classification by name.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "collector/analysis/api_classifier.h"
#include "collector/analysis/kernel_classifier.h"

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

TEST(KernelClassifier, ElementwiseAndUnknownKernelsAreOther) {
  ExpectKernelClass(
      KernelClass::kOther,
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
       "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
       "at::detail::Array<char*, 3>)",
       "void at::native::reduce_kernel<512, 1>", "softmax_warp_forward", "", "memcpy32_post"});
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

}  // namespace
}  // namespace gpuspy::analysis
