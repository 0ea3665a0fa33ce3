// Workload 10a: a plain CUDA C++ program, no PyTorch. Runtime-API launches (<<<>>>, which nvcc 13
// turns into __cudaLaunchKernel_v13000), synchronous cudaMemcpy from pageable memory, and a small
// cudaMalloc/cudaFree per step; each step is an NVTX range "ProfilerStep#N" (NVTX3, header-only).
//
// A step: cudaMalloc a 1 MiB scratch buffer, cudaMemcpy 128 MiB host->device (pageable: staged
// and synchronous, ~10-25 GB/s), KERNELS_PER_STEP launches of a compute kernel (~0.2 ms each),
// cudaMemcpy 4 bytes device->host (waits for the kernels), cudaFree the scratch.
// The copy takes most of the step: expected copy_dominated, with exactly KERNELS_PER_STEP kernels
// and 2 memcpys per step.
//
// At exit prints "GPUSUITE_RESULT {json}" like the Python workloads.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr size_t kElements = 32u << 20;  // 128 MiB of float
constexpr int kKernelsPerStep = 20;
constexpr int kIters = 64;

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                 \
                   cudaGetErrorString(err_));                                            \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

__global__ void FmaChain(const float* in, float* out, size_t n, int iters) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float x = in[i];
  for (int k = 0; k < iters; ++k) x = x * 0.9999f + 0.0001f;
  out[i] = x;
}

__global__ void Reduce(const float* in, float* sum, size_t n) {
  // One block: a cheap checksum of a strided sample, so the D2H copy has something to read.
  float s = 0.f;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x * 4096) s += in[i];
  atomicAdd(sum, s);
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 30;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) steps = std::atoi(argv[++i]);
  }
  std::vector<float> host(kElements);
  for (size_t i = 0; i < kElements; ++i) host[i] = static_cast<float>(i % 1000) * 1e-3f;
  float *d_in = nullptr, *d_out = nullptr, *d_sum = nullptr;
  CHECK(cudaMalloc(&d_in, kElements * sizeof(float)));
  CHECK(cudaMalloc(&d_out, kElements * sizeof(float)));
  CHECK(cudaMalloc(&d_sum, sizeof(float)));
  const int block = 256;
  const int grid = static_cast<int>((kElements + block - 1) / block);

  std::vector<double> step_ms;
  float checksum = 0.f;
  for (int s = 0; s < steps; ++s) {
    const std::string name = "ProfilerStep#" + std::to_string(s);
    nvtxRangePushA(name.c_str());
    const auto t0 = std::chrono::steady_clock::now();
    void* scratch = nullptr;
    CHECK(cudaMalloc(&scratch, 1 << 20));
    CHECK(cudaMemcpy(d_in, host.data(), kElements * sizeof(float), cudaMemcpyHostToDevice));
    for (int k = 0; k < kKernelsPerStep - 1; ++k) {
      FmaChain<<<grid, block>>>(d_in, d_out, kElements, kIters);
    }
    Reduce<<<1, block>>>(d_out, d_sum, kElements);
    CHECK(cudaGetLastError());
    float sum = 0.f;
    CHECK(cudaMemcpy(&sum, d_sum, sizeof(float), cudaMemcpyDeviceToHost));
    checksum += sum;
    CHECK(cudaFree(scratch));
    const auto t1 = std::chrono::steady_clock::now();
    nvtxRangePop();
    step_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  CHECK(cudaDeviceSynchronize());
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("GPUSUITE_RESULT {\"workload\": \"plain_cuda\", \"variant\": \"bad\", \"rank\": 0, "
              "\"steps\": %d, \"device\": \"%s\", \"checksum\": %g, "
              "\"expect_per_step\": {\"kernels\": %d, \"memcpys\": 2}, \"step_ms\": [",
              steps, prop.name, static_cast<double>(checksum), kKernelsPerStep);
  for (size_t i = 0; i < step_ms.size(); ++i) std::printf("%s%.4f", i ? ", " : "", step_ms[i]);
  std::printf("]}\n");
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  CHECK(cudaFree(d_sum));
  return 0;
}
