// Kernel launches: runtime (cudaLaunchKernel, nvcc 13's __cudaLaunchKernel), driver
// (cuLaunchKernelEx) and CUDA graph launches.
#include <algorithm>

#include "tests/fake_cuda/fake_activity_buffers.h"
#include "tests/fake_cuda/fake_api_call.h"
#include "tests/fake_cuda/fake_cuda.h"
#include "tests/fake_cuda/fake_cupti_state.h"
#include "tests/fake_cuda/fake_pm_sampling.h"

using namespace fake_cupti;

namespace {

constexpr uint32_t kGraphId = 7;  // the one captured graph the fake "instantiates"

struct Launch {
  const char* name;
  fake_dim3 grid, block;
  uint32_t shared_bytes;
  uint32_t stream;
  uint64_t gpu_ns;
};

// CONCURRENT_KERNEL is what profilers enable; a client that enabled only KERNEL (serialized
// kernels) gets records of that kind instead.
void EmitKernelRecord(const Launch& l, GpuSpan span, uint32_t correlation_id, uint32_t graph_id,
                      uint64_t graph_node_id) {
  CUpti_ActivityKind kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  if (!KindEnabled(kind)) {
    if (!KindEnabled(CUPTI_ACTIVITY_KIND_KERNEL)) return;
    kind = CUPTI_ACTIVITY_KIND_KERNEL;
  }
  CUpti_ActivityKernel10 k{};
  k.kind = kind;
  k.start = span.start;
  k.end = span.end;
  k.completed = span.end;
  k.deviceId = kDeviceId;
  k.contextId = kContextId;
  k.streamId = l.stream;
  k.gridX = static_cast<int32_t>(l.grid.x);
  k.gridY = static_cast<int32_t>(l.grid.y);
  k.gridZ = static_cast<int32_t>(l.grid.z);
  k.blockX = static_cast<int32_t>(l.block.x);
  k.blockY = static_cast<int32_t>(l.block.y);
  k.blockZ = static_cast<int32_t>(l.block.z);
  k.registersPerThread = 32;
  k.staticSharedMemory = 0;
  k.dynamicSharedMemory = static_cast<int32_t>(l.shared_bytes);
  k.correlationId = correlation_id;
  k.name = Intern(l.name);
  k.queued = CUPTI_TIMESTAMP_UNKNOWN;  // only with cuptiActivityEnableLatencyTimestamps
  k.submitted = CUPTI_TIMESTAMP_UNKNOWN;
  k.graphId = graph_id;
  k.graphNodeId = graph_node_id;
  Emit(k, kContextId, l.stream);
}

void EmitKernel(const Launch& l, uint32_t correlation_id, uint64_t enqueued, uint32_t graph_id,
                uint64_t graph_node_id) {
  // The GPU runs the kernel whether or not anyone records it.
  const GpuSpan span = ScheduleOnStream(l.stream, enqueued, l.gpu_ns);
  PmRecordKernel(span.start, span.end);
  EmitKernelRecord(l, span, correlation_id, graph_id, graph_node_id);
}

void LaunchThrough(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const Launch& l) {
  ApiCall call(domain, cbid, l.name);
  const uint64_t enqueued = call.start();
  call.Finish();
  EmitKernel(l, call.correlation_id(), enqueued, 0, 0);
}

}  // namespace

extern "C" {

void fake_cuda_launch_kernel(const char* name, fake_dim3 grid, fake_dim3 block,
                             uint32_t shared_bytes, uint32_t stream, uint64_t gpu_ns) {
  LaunchThrough(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                {name, grid, block, shared_bytes, stream, gpu_ns});
}

void fake_cuda_launch_kernel_nvcc13(const char* name, fake_dim3 grid, fake_dim3 block,
                                    uint32_t shared_bytes, uint32_t stream, uint64_t gpu_ns) {
  LaunchThrough(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
                {name, grid, block, shared_bytes, stream, gpu_ns});
}

void fake_cu_launch_kernel_ex(const char* name, fake_dim3 grid, fake_dim3 block,
                              uint32_t shared_bytes, uint32_t stream, uint64_t gpu_ns) {
  LaunchThrough(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                {name, grid, block, shared_bytes, stream, gpu_ns});
}

void fake_cuda_graph_launch(uint32_t kernels, uint32_t stream, uint64_t gpu_ns_each) {
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
  const uint64_t enqueued = call.start();
  call.Finish();
  if (KindEnabled(CUPTI_ACTIVITY_KIND_GRAPH_TRACE)) {
    // Graph-level tracing: one record for the whole graph instead of one per node (the point of
    // the kind is not paying for per-node records).
    const GpuSpan span = ScheduleOnStream(stream, enqueued, uint64_t{kernels} * gpu_ns_each);
    CUpti_ActivityGraphTrace2 g{};
    g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
    g.correlationId = call.correlation_id();
    g.start = span.start;
    g.end = span.end;
    g.deviceId = kDeviceId;
    g.contextId = kContextId;
    g.streamId = stream;
    g.graphId = kGraphId;
    Emit(g, kContextId, stream);
    return;
  }
  // Node kernels share the launch's correlation id and carry the graph's id; node ids are the
  // graph's own, the same at every launch.
  for (uint32_t i = 0; i < kernels; ++i) {
    EmitKernel({"graph_node_kernel", {32, 1, 1}, {256, 1, 1}, 0, stream, gpu_ns_each},
               call.correlation_id(), enqueued, kGraphId, i + 1);
  }
}

void fake_cuda_launch_collective(const char* name, fake_dim3 grid, fake_dim3 block,
                                 uint32_t stream, uint64_t (*end_at)(uint64_t start_ns, void* arg),
                                 void* arg) {
  const Launch l{name, grid, block, 0, stream, 0};
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, name);
  const uint64_t enqueued = call.start();
  call.Finish();
  // The kernel starts when its stream gets to it (this rank arrives); until end_at says when
  // the last rank arrived, nothing later on the stream can be scheduled.
  GpuSpan span = ScheduleOnStream(stream, enqueued, 0);
  span.end = std::max(span.start, end_at(span.start, arg));
  ExtendStreamTo(stream, span.end);
  EmitKernelRecord(l, span, call.correlation_id(), 0, 0);
}

}  // extern "C"
