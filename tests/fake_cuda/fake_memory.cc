// Memory calls: copies, memsets, allocations and the stream-ordered allocator's pool.
#include "tests/fake_cuda/fake_activity_buffers.h"
#include "tests/fake_cuda/fake_api_call.h"
#include "tests/fake_cuda/fake_cuda.h"
#include "tests/fake_cuda/fake_cupti_state.h"

using namespace fake_cupti;

// fake_cuda.h's enums are CUPTI's values, so they go into records unchanged.
static_assert(int{FAKE_HTOD} == int{CUPTI_ACTIVITY_MEMCPY_KIND_HTOD});
static_assert(int{FAKE_DTOH} == int{CUPTI_ACTIVITY_MEMCPY_KIND_DTOH});
static_assert(int{FAKE_DTOD} == int{CUPTI_ACTIVITY_MEMCPY_KIND_DTOD});
static_assert(int{FAKE_PTOP} == int{CUPTI_ACTIVITY_MEMCPY_KIND_PTOP});
static_assert(int{FAKE_PAGEABLE} == int{CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE});
static_assert(int{FAKE_PINNED} == int{CUPTI_ACTIVITY_MEMORY_KIND_PINNED});
static_assert(int{FAKE_DEVICE} == int{CUPTI_ACTIVITY_MEMORY_KIND_DEVICE});

namespace {

constexpr uint32_t kPeerDeviceId = 1;  // the other end of a peer copy
constexpr uint32_t kPeerContextId = 2;

uint64_t CopyDuration(uint64_t bytes) { return 1000 + bytes / 10; }     // ~10 GB/s over PCIe
uint64_t MemsetDuration(uint64_t bytes) { return 1000 + bytes / 1000; }  // ~1 TB/s in HBM

void EmitPeerCopy(uint64_t bytes, bool async, uint32_t stream, GpuSpan span, uint32_t corr) {
  CUpti_ActivityMemcpyPtoP4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  m.bytes = bytes;
  m.start = span.start;
  m.end = span.end;
  m.deviceId = kDeviceId;
  m.contextId = kContextId;
  m.streamId = stream;
  m.srcDeviceId = kDeviceId;
  m.srcContextId = kContextId;
  m.dstDeviceId = kPeerDeviceId;
  m.dstContextId = kPeerContextId;
  m.correlationId = corr;
  Emit(m, kContextId, stream);
}

uint64_t FakeAddress(uint64_t bytes) {
  std::lock_guard lock(S().mu);
  const uint64_t address = S().next_address;
  S().next_address += (bytes + 0xfffff) & ~0xfffffull;  // 1 MiB granules, like the real allocator
  if (bytes == 0) S().next_address += 0x100000;
  S().allocations[address] = bytes;
  return address;
}

void EmitMemory(CUpti_ActivityMemoryOperationType op, uint64_t address, uint64_t bytes,
                uint64_t timestamp, uint32_t corr) {
  CUpti_ActivityMemory4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = op;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.correlationId = corr;
  m.address = address;
  m.bytes = bytes;
  m.timestamp = timestamp;
  m.processId = ProcessId();
  m.deviceId = kDeviceId;
  m.contextId = kContextId;
  m.streamId = CUPTI_INVALID_STREAM_ID;  // cudaMalloc/cudaFree are not stream-ordered
  m.isAsync = 0;
  Emit(m, kContextId, CUPTI_INVALID_STREAM_ID);
}

}  // namespace

extern "C" {

void fake_cuda_memcpy(int copy_kind, int src_memory, int dst_memory, uint64_t bytes, int async,
                      uint32_t stream, uint64_t gpu_ns) {
  const bool peer = copy_kind == FAKE_PTOP;
  const CUpti_CallbackId cbid =
      peer ? (async ? CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000
                    : CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000)
           : (async ? CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020
                    : CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020);
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  const GpuSpan span =
      ScheduleOnStream(stream, call.start(), gpu_ns != 0 ? gpu_ns : CopyDuration(bytes));
  // CUDA stages pageable memory through its own pinned buffer: such copies block even when
  // "async".
  const bool pageable = src_memory == FAKE_PAGEABLE || dst_memory == FAKE_PAGEABLE;
  if (!async || pageable) SleepUntil(span.end);
  call.Finish();
  if (peer) {
    EmitPeerCopy(bytes, async != 0, stream, span, call.correlation_id());
    return;
  }
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = static_cast<uint8_t>(copy_kind);
  m.srcKind = static_cast<uint8_t>(src_memory);
  m.dstKind = static_cast<uint8_t>(dst_memory);
  m.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  m.bytes = bytes;
  m.start = span.start;
  m.end = span.end;
  m.deviceId = kDeviceId;
  m.contextId = kContextId;
  m.streamId = stream;
  m.correlationId = call.correlation_id();
  m.runtimeCorrelationId = call.correlation_id();
  Emit(m, kContextId, stream);
}

void fake_cuda_memset(uint64_t bytes, uint32_t value, uint32_t stream, int async) {
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, async ? CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020
                                                  : CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020);
  const GpuSpan span = ScheduleOnStream(stream, call.start(), MemsetDuration(bytes));
  if (!async) SleepUntil(span.end);
  call.Finish();
  CUpti_ActivityMemset4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.value = value;
  m.bytes = bytes;
  m.start = span.start;
  m.end = span.end;
  m.deviceId = kDeviceId;
  m.contextId = kContextId;
  m.streamId = stream;
  m.correlationId = call.correlation_id();
  m.flags = async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  Emit(m, kContextId, stream);
}

uint64_t fake_cuda_malloc(uint64_t bytes) {
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
  const uint64_t address = FakeAddress(bytes);
  const uint64_t allocated = Now();
  call.Finish();
  EmitMemory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, address, bytes, allocated,
             call.correlation_id());
  return address;
}

void fake_cuda_free(uint64_t address) {
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020);
  SleepUntil(DeviceIdleAt());  // cudaFree synchronizes the device
  bool known = false;
  uint64_t bytes = 0;
  {
    std::lock_guard lock(S().mu);
    if (auto it = S().allocations.find(address); it != S().allocations.end()) {
      known = true;
      bytes = it->second;
      S().allocations.erase(it);
    }
  }
  const uint64_t released = Now();
  call.Finish();
  // cudaFree(nullptr) (a common way to force context creation) or an unknown pointer frees
  // nothing, so there is no memory record.
  if (known) {
    EmitMemory(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, address, bytes, released,
               call.correlation_id());
  }
}

void fake_cuda_mempool_create(uint64_t release_threshold) {
  fake_cuda_init();
  CUpti_ActivityMemoryPool3 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  m.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
  m.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  m.processId = ProcessId();
  m.deviceId = kDeviceId;
  m.address = 0x7e0000000000;
  m.size = 2ull << 30;
  m.releaseThreshold = release_threshold;
  m.timestamp = Now();
  Emit(m);
}

void fake_cuda_push_external_id(uint64_t id) {
  std::lock_guard lock(S().mu);
  S().pending_external_id = id;
}

}  // extern "C"
