// A fake libcupti.so.13 with CUPTI's real entry points and semantics (as documented in the
// CUDA 13 headers), plus the fake CUDA calls of fake_cuda.h that drive it. Lets the real
// injection path (shim -> stub -> core -> CUPTI) run in CI without a GPU.
#include <cupti.h>
#include <dlfcn.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "tests/fake_cuda/fake_cuda.h"

// Sizes of the CUDA 13 record layouts this fake writes: a toolkit upgrade that changes them must
// be noticed here and in the core's parser.
static_assert(sizeof(CUpti_ActivityAPI) == 40);
static_assert(sizeof(CUpti_ActivitySynchronization2) == 56);

namespace {

constexpr uint32_t kContextId = 1;

size_t RecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return sizeof(CUpti_ActivityMemoryPool3);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return sizeof(CUpti_ActivityGraphTrace2);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    default: return 0;
  }
}
size_t Padded(size_t n) { return (n + 7) / 8 * 8; }

uint64_t RealNow() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + ts.tv_nsec;
}

struct State {
  std::recursive_mutex mu;
  bool subscribed = false;
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  std::set<CUpti_CallbackDomain> domains;
  std::set<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> callbacks;
  std::set<CUpti_ActivityKind> kinds;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  uint8_t* buffer = nullptr;
  size_t buffer_size = 0;
  size_t used = 0;
  size_t dropped = 0;
  uint32_t correlation = 1;
  uint32_t marker_id = 1;
  uint64_t host = 0;  // a host clock that never runs backwards, and jumps past faked waits
  std::map<uint32_t, uint64_t> gpu_free;
  std::deque<std::string> names;  // records point into these for the life of the process
  std::vector<uint32_t> open_markers;
  uint64_t next_address = 0x7f0000000000;
  std::map<uint64_t, uint64_t> allocations;
  bool initialized = false;
};

State& S() {
  static State* s = new State();
  return *s;
}

const char* Intern(const std::string& s) { return S().names.emplace_back(s).c_str(); }

uint64_t HostNow() {
  State& s = S();
  s.host = std::max(s.host + 100, RealNow());
  return s.host;
}

// Hands the current buffer to the client. Called with the lock held: the fake's lock is
// recursive because the client's completion callback may call back into CUPTI.
void CompleteBuffer() {
  State& s = S();
  if (s.buffer == nullptr) return;
  uint8_t* b = s.buffer;
  const size_t size = s.buffer_size, used = s.used;
  s.buffer = nullptr;
  s.used = 0;
  if (s.complete != nullptr) s.complete(nullptr, 0, b, size, used);
}

template <typename T>
void Append(const T& record) {
  State& s = S();
  const auto kind = reinterpret_cast<const CUpti_Activity*>(&record)->kind;
  if (!s.kinds.contains(kind) &&
      !(kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && s.kinds.contains(CUPTI_ACTIVITY_KIND_KERNEL))) {
    return;
  }
  const size_t need = Padded(sizeof(T));
  if (s.buffer != nullptr && s.used + need > s.buffer_size) CompleteBuffer();
  if (s.buffer == nullptr) {
    size_t max_records = 0;
    if (s.request != nullptr) s.request(&s.buffer, &s.buffer_size, &max_records);
    if (s.buffer == nullptr || s.buffer_size < need) {
      s.buffer = nullptr;
      ++s.dropped;
      return;
    }
    s.used = 0;
  }
  std::memset(s.buffer + s.used, 0, need);
  std::memcpy(s.buffer + s.used, &record, sizeof(T));
  s.used += need;
}

void Callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  State& s = S();
  if (!s.subscribed || s.callback == nullptr) return;
  if (!s.domains.contains(domain) && !s.callbacks.contains({domain, cbid})) return;
  s.callback(s.userdata, domain, cbid, data);
}

uint32_t Tid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

// An API call: enter/exit callbacks and its activity record. Returns the correlation id.
uint32_t Api(bool driver, CUpti_CallbackId cbid, const char* name, uint64_t start, uint64_t end,
             const char* symbol = nullptr) {
  State& s = S();
  const uint32_t corr = s.correlation++;
  const CUpti_CallbackDomain domain = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  CUpti_CallbackData data{};
  data.functionName = name;
  data.symbolName = symbol;
  data.correlationId = corr;
  data.contextUid = kContextId;
  data.callbackSite = CUPTI_API_ENTER;
  Callback(domain, cbid, &data);
  data.callbackSite = CUPTI_API_EXIT;
  Callback(domain, cbid, &data);
  CUpti_ActivityAPI a{};
  a.kind = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = static_cast<uint32_t>(getpid());
  a.threadId = Tid();
  a.correlationId = corr;
  Append(a);
  return corr;
}

void Kernel(const char* name, uint32_t corr, uint64_t launched, uint32_t grid_x, uint32_t block_x,
            uint32_t stream, uint64_t gpu_ns, uint32_t graph_id) {
  State& s = S();
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = std::max(launched + 3000, s.gpu_free[stream]);
  k.end = k.start + gpu_ns;
  k.deviceId = 0;
  k.contextId = kContextId;
  k.streamId = stream;
  k.gridX = static_cast<int32_t>(grid_x);
  k.gridY = k.gridZ = 1;
  k.blockX = static_cast<int32_t>(block_x);
  k.blockY = k.blockZ = 1;
  k.registersPerThread = 32;
  k.correlationId = corr;
  k.name = Intern(name);
  k.graphId = graph_id;
  s.gpu_free[stream] = k.end;
  Append(k);
}

void Launch(bool driver, CUpti_CallbackId cbid, const char* api, const char* name, uint32_t grid_x,
            uint32_t block_x, uint32_t stream, uint64_t gpu_ns) {
  fake_cuda_init();
  std::lock_guard lock(S().mu);
  const uint64_t start = HostNow();
  const uint64_t end = start + 4000;
  S().host = end;
  const uint32_t corr = Api(driver, cbid, api, start, end, name);
  Kernel(name, corr, end, grid_x, block_x, stream, gpu_ns, 0);
}

}  // namespace

extern "C" {

// ---------------------------------------------------------------------------------------------
// CUPTI

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                    void* userdata) {
  State& s = S();
  std::lock_guard lock(s.mu);
  const char* busy = std::getenv("FAKE_CUPTI_BUSY");
  if (s.subscribed || (busy != nullptr && std::strcmp(busy, "1") == 0)) {
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  s.subscribed = true;
  s.callback = callback;
  s.userdata = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&s);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle) {
  State& s = S();
  std::lock_guard lock(s.mu);
  s.subscribed = false;
  s.callback = nullptr;
  s.domains.clear();
  s.callbacks.clear();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain domain) {
  std::lock_guard lock(S().mu);
  if (enable) S().domains.insert(domain); else S().domains.erase(domain);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  std::lock_guard lock(S().mu);
  if (enable) S().callbacks.insert({domain, cbid}); else S().callbacks.erase({domain, cbid});
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                    CUpti_BuffersCallbackCompleteFunc complete) {
  std::lock_guard lock(S().mu);
  S().request = request;
  S().complete = complete;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  std::lock_guard lock(S().mu);
  S().kinds.insert(kind);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  std::lock_guard lock(S().mu);
  S().kinds.erase(kind);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t) {
  std::lock_guard lock(S().mu);
  if (S().used > 0) CompleteBuffer();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  size_t offset = 0;
  if (*record != nullptr) {
    offset = static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) +
             Padded(RecordSize((*record)->kind));
  }
  if (offset >= valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  return RecordSize((*record)->kind) == 0 ? CUPTI_ERROR_INVALID_KIND : CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  std::lock_guard lock(S().mu);
  *dropped = S().dropped;
  S().dropped = 0;  // like CUPTI: the count is reset once read
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  *timestamp = RealNow();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  switch (result) {
    case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
      break;
    default: *str = "CUPTI_ERROR_UNKNOWN"; break;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000: *name = "cudaLaunchKernel_v7000"; return CUPTI_SUCCESS;
      case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000: *name = "__cudaLaunchKernel_v13000"; return CUPTI_SUCCESS;
      case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000: *name = "cudaGraphLaunch_v10000"; return CUPTI_SUCCESS;
      case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020: *name = "cudaMemcpy_v3020"; return CUPTI_SUCCESS;
      case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020: *name = "cudaMemcpyAsync_v3020"; return CUPTI_SUCCESS;
      case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020: *name = "cudaMemsetAsync_v3020"; return CUPTI_SUCCESS;
      case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020: *name = "cudaMalloc_v3020"; return CUPTI_SUCCESS;
      case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020: *name = "cudaFree_v3020"; return CUPTI_SUCCESS;
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020: *name = "cudaStreamSynchronize_v3020"; return CUPTI_SUCCESS;
      case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020: *name = "cudaDeviceSynchronize_v3020"; return CUPTI_SUCCESS;
      default: break;
    }
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx) {
    *name = "cuLaunchKernelEx";
    return CUPTI_SUCCESS;
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType) { return CUPTI_SUCCESS; }

CUptiResult CUPTIAPI cuptiFinalize(void) {
  std::lock_guard lock(S().mu);
  S().kinds.clear();
  S().subscribed = false;
  S().callback = nullptr;
  return CUPTI_SUCCESS;
}

int InitializeInjectionNvtx2(void*) { return 1; }

// ---------------------------------------------------------------------------------------------
// Fake CUDA

void fake_cuda_init(void) {
  State& s = S();
  {
    std::lock_guard lock(s.mu);
    if (s.initialized) return;
    s.initialized = true;
  }
  // What the driver does on cuInit: load the injection library and call its entry point.
  if (const char* path = std::getenv("CUDA_INJECTION64_PATH"); path != nullptr && *path != '\0') {
    if (void* lib = dlopen(path, RTLD_NOW)) {
      if (auto init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"))) init();
    }
  }
  std::lock_guard lock(s.mu);
  CUpti_ResourceData created{};
  Callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &created);
  CUpti_ActivityDevice5 d{};
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 0;
  d.name = Intern("Fake H100");
  d.numMultiprocessors = 132;
  d.globalMemorySize = 80ull << 30;
  d.computeCapabilityMajor = 9;
  Append(d);
  CUpti_ActivityContext3 c{};
  c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  c.contextId = kContextId;
  c.deviceId = 0;
  Append(c);
}

void fake_cuda_launch_kernel(const char* name, uint32_t grid_x, uint32_t block_x, uint32_t stream,
                             uint64_t gpu_ns) {
  Launch(false, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel", name, grid_x,
         block_x, stream, gpu_ns);
}

void fake_cuda_launch_kernel_nvcc13(const char* name, uint32_t stream, uint64_t gpu_ns) {
  Launch(false, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, "__cudaLaunchKernel", name, 1,
         128, stream, gpu_ns);
}

void fake_cu_launch_kernel_ex(const char* name, uint32_t stream, uint64_t gpu_ns) {
  Launch(true, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx", name, 64, 128, stream,
         gpu_ns);
}

void fake_cuda_graph_launch(uint32_t kernels, uint32_t stream, uint64_t gpu_ns_each) {
  fake_cuda_init();
  std::lock_guard lock(S().mu);
  const uint64_t start = HostNow();
  const uint64_t end = start + 5000;
  S().host = end;
  const uint32_t corr = Api(false, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, "cudaGraphLaunch", start, end);
  if (S().kinds.contains(CUPTI_ACTIVITY_KIND_GRAPH_TRACE)) {
    // Graph-level tracing replaces the per-node kernel records, as in CUPTI.
    CUpti_ActivityGraphTrace2 g{};
    g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
    g.correlationId = corr;
    g.start = std::max(end + 3000, S().gpu_free[stream]);
    g.end = g.start + kernels * gpu_ns_each;
    g.deviceId = 0;
    g.contextId = kContextId;
    g.streamId = stream;
    g.graphId = 7;
    S().gpu_free[stream] = g.end;
    Append(g);
    return;
  }
  for (uint32_t i = 0; i < kernels; ++i) {
    Kernel("graph_node_kernel", corr, end, 32, 256, stream, gpu_ns_each, 7);
  }
}

void fake_cuda_memcpy(int kind, int host, uint64_t bytes, int async, uint32_t stream) {
  fake_cuda_init();
  State& s = S();
  std::lock_guard lock(s.mu);
  const uint64_t start = HostNow();
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = static_cast<uint8_t>(kind);
  m.srcKind = static_cast<uint8_t>(kind == FAKE_HTOD ? host : FAKE_DEVICE);
  m.dstKind = static_cast<uint8_t>(kind == FAKE_DTOH ? host : FAKE_DEVICE);
  m.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  m.bytes = bytes;
  m.start = std::max(start + 2000, s.gpu_free[stream]);
  m.end = m.start + 1000 + bytes / 10;  // ~10 GB/s
  m.deviceId = 0;
  m.contextId = kContextId;
  m.streamId = stream;
  s.gpu_free[stream] = m.end;
  const bool blocks = !async || host == FAKE_PAGEABLE;
  const uint64_t end = blocks ? m.end + 1000 : start + 3000;
  s.host = end;
  m.correlationId = Api(false,
                        async ? CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020
                              : CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
                        async ? "cudaMemcpyAsync" : "cudaMemcpy", start, end);
  Append(m);
}

void fake_cuda_memset(uint64_t bytes, uint32_t value, uint32_t stream) {
  fake_cuda_init();
  State& s = S();
  std::lock_guard lock(s.mu);
  const uint64_t start = HostNow();
  const uint64_t end = start + 3000;
  s.host = end;
  CUpti_ActivityMemset4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.value = value;
  m.bytes = bytes;
  m.start = std::max(end + 1000, s.gpu_free[stream]);
  m.end = m.start + 2000;
  m.contextId = kContextId;
  m.streamId = stream;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  s.gpu_free[stream] = m.end;
  m.correlationId = Api(false, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, "cudaMemsetAsync", start, end);
  Append(m);
}

uint64_t fake_cuda_malloc(uint64_t bytes) {
  fake_cuda_init();
  State& s = S();
  std::lock_guard lock(s.mu);
  const uint64_t start = HostNow();
  const uint64_t end = start + 20000;
  s.host = end;
  const uint64_t address = s.next_address;
  s.next_address += (bytes + 0xfffff) & ~0xfffffull;
  s.allocations[address] = bytes;
  CUpti_ActivityMemory4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.address = address;
  m.bytes = bytes;
  m.timestamp = end - 1000;
  m.contextId = kContextId;
  m.correlationId = Api(false, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, "cudaMalloc", start, end);
  Append(m);
  return address;
}

void fake_cuda_free(uint64_t address) {
  fake_cuda_init();
  State& s = S();
  std::lock_guard lock(s.mu);
  uint64_t start = HostNow();
  uint64_t drained = 0;
  for (const auto& [stream, t] : s.gpu_free) drained = std::max(drained, t);
  const uint64_t end = std::max(start, drained) + 10000;  // cudaFree synchronizes the device
  s.host = end;
  CUpti_ActivityMemory4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.address = address;
  m.bytes = s.allocations[address];
  m.timestamp = end - 1000;
  m.contextId = kContextId;
  m.correlationId = Api(false, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, "cudaFree", start, end);
  Append(m);
}

static void Synchronize(uint32_t stream, bool device) {
  fake_cuda_init();
  State& s = S();
  std::lock_guard lock(s.mu);
  const uint64_t start = HostNow();
  uint64_t drained = s.gpu_free[stream];
  if (device) {
    for (const auto& [id, t] : s.gpu_free) drained = std::max(drained, t);
  }
  const uint64_t end = std::max(start + 1000, drained + 1000);
  s.host = end;
  CUpti_ActivitySynchronization2 y{};
  y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  y.type = device ? CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE
                  : CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  y.start = start;
  y.end = end;
  y.contextId = kContextId;
  y.streamId = device ? CUPTI_SYNCHRONIZATION_INVALID_VALUE : stream;
  y.correlationId = Api(false,
                        device ? CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020
                               : CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
                        device ? "cudaDeviceSynchronize" : "cudaStreamSynchronize", start, end);
  Append(y);
}

void fake_cuda_stream_synchronize(uint32_t stream) { Synchronize(stream, false); }
void fake_cuda_device_synchronize(void) { Synchronize(0, true); }

static void Marker(CUpti_ActivityFlag flag, uint32_t id, const char* message) {
  CUpti_ActivityMarker2 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = flag;
  m.timestamp = HostNow();
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = static_cast<uint32_t>(getpid());
  m.objectId.pt.threadId = Tid();
  m.name = message != nullptr ? Intern(message) : nullptr;
  m.domain = nullptr;
  Append(m);
}

void fake_nvtx_range_push(const char* message) {
  std::lock_guard lock(S().mu);
  const uint32_t id = S().marker_id++;
  S().open_markers.push_back(id);
  Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, id, message);
}

void fake_nvtx_range_pop(void) {
  std::lock_guard lock(S().mu);
  if (S().open_markers.empty()) return;
  const uint32_t id = S().open_markers.back();
  S().open_markers.pop_back();
  Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, id, nullptr);
}

void fake_nvtx_mark(const char* message) {
  std::lock_guard lock(S().mu);
  Marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, S().marker_id++, message);
}

void fake_cuda_push_external_id(uint64_t id) {
  std::lock_guard lock(S().mu);
  CUpti_ActivityExternalCorrelation x{};
  x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  x.externalId = id;
  x.correlationId = S().correlation;  // the next API call's
  Append(x);
}

void fake_cuda_mempool_create(uint64_t release_threshold) {
  fake_cuda_init();
  std::lock_guard lock(S().mu);
  CUpti_ActivityMemoryPool3 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  m.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
  m.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  m.deviceId = 0;
  m.address = 0x7e0000000000;
  m.size = 2ull << 30;
  m.releaseThreshold = release_threshold;
  m.timestamp = HostNow();
  Append(m);
}

void fake_cuda_context_destroy(void) {
  std::lock_guard lock(S().mu);
  CUpti_ResourceData data{};
  Callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, &data);
}

}  // extern "C"
