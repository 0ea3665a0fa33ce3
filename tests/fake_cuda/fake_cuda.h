// The fake CUDA "driver/runtime" a test program calls instead of real CUDA. It lives in the
// fake libcupti.so.13 (tests/fake_cuda), so it shares state with the fake CUPTI: every call
// produces the callbacks and activity records real CUDA + CUPTI would, and the first call
// performs CUDA's injection (CUDA_INJECTION64_PATH -> InitializeInjection) like the driver does.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fake_copy_kind { FAKE_HTOD = 1, FAKE_DTOH = 2, FAKE_DTOD = 8 };
enum fake_memory { FAKE_PAGEABLE = 1, FAKE_PINNED = 2, FAKE_DEVICE = 3 };

void fake_cuda_init(void);
void fake_cuda_launch_kernel(const char* name, uint32_t grid_x, uint32_t block_x, uint32_t stream,
                             uint64_t gpu_ns);
// nvcc 13 `<<<>>>` launch (cbid __cudaLaunchKernel_v13000).
void fake_cuda_launch_kernel_nvcc13(const char* name, uint32_t stream, uint64_t gpu_ns);
// Triton / torch.compile launches through the driver API.
void fake_cu_launch_kernel_ex(const char* name, uint32_t stream, uint64_t gpu_ns);
void fake_cuda_graph_launch(uint32_t kernels, uint32_t stream, uint64_t gpu_ns_each);
// Copy between host memory of kind `host` and the device; synchronous or pageable copies block.
void fake_cuda_memcpy(int kind, int host, uint64_t bytes, int async, uint32_t stream);
void fake_cuda_memset(uint64_t bytes, uint32_t value, uint32_t stream);
uint64_t fake_cuda_malloc(uint64_t bytes);
void fake_cuda_free(uint64_t address);
void fake_cuda_stream_synchronize(uint32_t stream);
void fake_cuda_device_synchronize(void);
void fake_nvtx_range_push(const char* message);
void fake_nvtx_range_pop(void);
void fake_nvtx_mark(const char* message);
// A framework's id for the next CUDA call (CUPTI external correlation).
void fake_cuda_push_external_id(uint64_t id);
// A stream-ordered allocator pool is created (cudaMallocAsync's pool).
void fake_cuda_mempool_create(uint64_t release_threshold);
// Context teardown: CUPTI's resource callback (profilers flush there).
void fake_cuda_context_destroy(void);

#ifdef __cplusplus
}
#endif
