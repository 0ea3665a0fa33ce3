// The fake CUDA "driver/runtime" a test program calls instead of real CUDA. It lives in the fake
// libcupti.so.13 (tests/fake_cuda), so it shares state with the fake CUPTI: every call produces
// the callbacks and activity records real CUDA + CUPTI would, and the first call performs CUDA's
// injection (CUDA_INJECTION64_PATH -> InitializeInjection) like the driver does on cuInit.
//
// Plain C and no CUPTI types: the program using it plays "the user's application", which knows
// neither CUPTI nor gpuspy. Enum values equal CUPTI's (checked in fake_memory.cc), so they land
// in the records unchanged.
//
// Time: host-side API timestamps are the real CLOCK_REALTIME. The GPU is simulated: per stream,
// work starts at max(enqueue time + a small latency, end of the stream's previous work) and lasts
// the given duration. Calls that block in real CUDA (synchronous copies, synchronizations,
// cudaFree) really sleep until the simulated GPU work they wait for is done, so every timestamp
// stays on the real clock.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// CUpti_ActivityMemcpyKind.
enum fake_copy_kind { FAKE_HTOD = 1, FAKE_DTOH = 2, FAKE_DTOD = 8, FAKE_PTOP = 10 };
// CUpti_ActivityMemoryKind.
enum fake_memory { FAKE_PAGEABLE = 1, FAKE_PINNED = 2, FAKE_DEVICE = 3 };

typedef struct {
  uint32_t x, y, z;
} fake_dim3;

// cuInit + primary context creation. Every other call does it first if needed, like CUDA's lazy
// initialization; reading CUDA_INJECTION64_PATH and loading it happens once per process.
void fake_cuda_init(void);

// cudaLaunchKernel (runtime API): an API record and a kernel record sharing a correlation id.
// `shared_bytes` is the dynamic shared memory; 0 for "none".
void fake_cuda_launch_kernel(const char* name, fake_dim3 grid, fake_dim3 block,
                             uint32_t shared_bytes, uint32_t stream, uint64_t gpu_ns);
// A `<<<>>>` launch compiled by nvcc 13 (cbid __cudaLaunchKernel_v13000).
void fake_cuda_launch_kernel_nvcc13(const char* name, fake_dim3 grid, fake_dim3 block,
                                    uint32_t shared_bytes, uint32_t stream, uint64_t gpu_ns);
// cuLaunchKernelEx (driver API), as Triton / torch.compile launch.
void fake_cu_launch_kernel_ex(const char* name, fake_dim3 grid, fake_dim3 block,
                              uint32_t shared_bytes, uint32_t stream, uint64_t gpu_ns);
// cudaGraphLaunch of a graph with `kernels` kernel nodes named "graph_node_kernel". Kernel records
// carry the graph id; with GRAPH_TRACE enabled CUPTI gives one graph record instead of them.
void fake_cuda_graph_launch(uint32_t kernels, uint32_t stream, uint64_t gpu_ns_each);

// A collective's kernel (NCCL), launched as cudaLaunchKernel: it starts when `stream` gets to it
// (this process arrives) and runs until end_at(start_ns, arg), which may block: a collective ends
// when the last rank has arrived and the data has moved, which only the other processes can tell
// (fake_train's --allreduce-barrier plays that rendezvous through files).
void fake_cuda_launch_collective(const char* name, fake_dim3 grid, fake_dim3 block,
                                 uint32_t stream, uint64_t (*end_at)(uint64_t start_ns, void* arg),
                                 void* arg);

// cudaMemcpy (async == 0) or cudaMemcpyAsync; FAKE_PTOP uses cudaMemcpyPeer[Async] and a MEMCPY2
// record (device 0 -> device 1). The host waits for the copy when it is synchronous or when host
// memory is pageable (CUDA stages pageable copies). gpu_ns == 0: ~10 GB/s from `bytes`.
void fake_cuda_memcpy(int copy_kind, int src_memory, int dst_memory, uint64_t bytes, int async,
                      uint32_t stream, uint64_t gpu_ns);
// cudaMemset (async == 0, waits) or cudaMemsetAsync on device memory.
void fake_cuda_memset(uint64_t bytes, uint32_t value, uint32_t stream, int async);
// cudaMalloc: returns a fake device address (never 0).
uint64_t fake_cuda_malloc(uint64_t bytes);
// cudaFree: synchronizes the device first, as the real one does.
void fake_cuda_free(uint64_t address);
// cudaStreamSynchronize / cudaDeviceSynchronize: wait for the simulated GPU work.
void fake_cuda_stream_synchronize(uint32_t stream);
void fake_cuda_device_synchronize(void);
// cudaEventSynchronize on an event recorded on `stream` just now: waits for the stream's work.
void fake_cuda_event_synchronize(uint32_t stream);

// cudaEventRecord on `waited` + cudaStreamWaitEvent on `waiting` (a STREAM_WAIT_EVENT
// synchronization record): later work on `waiting` starts after what `waited` has queued so far.
// GPU-side only: the host does not wait.
void fake_cuda_stream_wait_stream(uint32_t waiting, uint32_t waited);

// NVTX (through CUPTI's NVTX injection): MARKER records when that kind is enabled. Ranges nest
// per thread, like nvtxRangePush/Pop.
void fake_nvtx_range_push(const char* message);
void fake_nvtx_range_pop(void);
void fake_nvtx_mark(const char* message);

// A framework's id for the next CUDA API call on any thread (CUPTI external correlation).
void fake_cuda_push_external_id(uint64_t id);
// A stream-ordered allocator pool is created (cudaMallocAsync's pool): a MEMORY_POOL record.
void fake_cuda_mempool_create(uint64_t release_threshold);
// The performance monitor's view of kernels launched from now on (until the next call): the
// tensor pipes' and DRAM's activity while one runs, in percent of peak. Both 0 at start. The fake
// PM sampler (fake_pm_sampling.cc) averages them over each sampling interval.
void fake_gpu_kernel_counters(float tensor_pct, float dram_pct);
// Context teardown: CUPTI's CONTEXT_DESTROY_STARTING resource callback (profilers flush there).
void fake_cuda_context_destroy(void);

// An OVERHEAD record of `overhead_kind` (a CUpti_ActivityOverheadKind) lasting `duration_ns`,
// ending now, on the calling thread.
void fake_cupti_overhead(int overhead_kind, uint64_t duration_ns);
// The correlation id of the most recent CUDA API call (ids are 1, 2, 3, ... per process): a test
// program reports it so a test can check every call's record arrived exactly once.
uint32_t fake_cuda_last_correlation_id(void);
// For unit tests that drive the fake directly: forgets the subscriber, enabled kinds and
// callbacks, buffers (never handed back: the test owns their memory), drop counts, the simulated
// GPU and the context, so the next call initializes again (without injecting again).
void fake_cupti_reset_for_tests(void);

#ifdef __cplusplus
}
#endif
