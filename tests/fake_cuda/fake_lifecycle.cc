// What the driver does around a context's life: cuInit (with CUDA's injection), primary context
// creation and its records, teardown; plus the test-only reset and CUPTI overhead records.
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "tests/fake_cuda/fake_activity_buffers.h"
#include "tests/fake_cuda/fake_callbacks.h"
#include "tests/fake_cuda/fake_cuda.h"
#include "tests/fake_cuda/fake_cupti_state.h"
#include "tests/fake_cuda/fake_pm_sampling.h"

using namespace fake_cupti;

namespace {

std::atomic<bool> initialized{false};
bool injected = false;                // once per process, even across resets: like the driver
thread_local bool initializing = false;  // the injection library calling CUDA from its init

std::mutex& InitMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}

// CUDA_INJECTION64_PATH: the driver dlopens it on cuInit and calls InitializeInjection.
void Inject() {
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  if (path == nullptr || *path == '\0') return;
  void* lib = dlopen(path, RTLD_NOW);
  if (lib == nullptr) {
    std::fprintf(stderr, "fake_cuda: cannot load CUDA_INJECTION64_PATH: %s\n", dlerror());
    return;
  }
  auto init = reinterpret_cast<int (*)(void)>(dlsym(lib, "InitializeInjection"));
  if (init == nullptr) {
    std::fprintf(stderr, "fake_cuda: %s has no InitializeInjection\n", path);
    return;
  }
  (void)init();  // its result does not stop CUDA from working
}

void EmitDeviceAndContext() {
  CUpti_ActivityDevice5 d{};
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = kDeviceId;
  d.name = Intern("Fake H100");
  d.numMultiprocessors = 132;
  d.globalMemorySize = 80ull << 30;
  d.globalMemoryBandwidth = 3'350'000'000;  // KB/s, H100 SXM's HBM3
  d.computeCapabilityMajor = 9;
  d.computeCapabilityMinor = 0;
  d.numThreadsPerWarp = 32;
  d.maxThreadsPerBlock = 1024;
  d.maxWarpsPerMultiprocessor = 64;
  d.maxBlocksPerMultiprocessor = 32;
  d.maxRegistersPerBlock = 65536;
  d.maxSharedMemoryPerBlock = 48 << 10;
  d.l2CacheSize = 50 << 20;
  d.coreClockRate = 1'980'000;  // kHz
  d.isCudaVisible = 1;
  Emit(d);
  CUpti_ActivityContext3 c{};
  c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  c.contextId = kContextId;
  c.deviceId = kDeviceId;
  c.nullStreamId = 0;
  Emit(c, kContextId, 0);
}

}  // namespace

extern "C" {

void fake_cuda_init(void) {
  if (initialized.load(std::memory_order_acquire) || initializing) return;
  std::lock_guard lock(InitMutex());
  if (initialized.load()) return;
  initializing = true;
  if (!injected) {
    injected = true;
    Inject();  // before the context exists, as in CUDA: the profiler sees its creation
  }
  FireContextResource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  EmitDeviceAndContext();
  initializing = false;
  initialized.store(true, std::memory_order_release);
}

void fake_cuda_context_destroy(void) {
  fake_cuda_init();
  FireContextResource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
}

void fake_cupti_overhead(int overhead_kind, uint64_t duration_ns) {
  const uint64_t end = Now();
  CUpti_ActivityOverhead3 o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = static_cast<CUpti_ActivityOverheadKind>(overhead_kind);
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.processId = ProcessId();
  o.objectId.pt.threadId = ThreadId();
  o.start = end - duration_ns;
  o.end = end;
  Emit(o);
}

uint32_t fake_cuda_last_correlation_id(void) {
  std::lock_guard lock(S().mu);
  return S().next_correlation - 1;
}

void fake_cupti_reset_for_tests(void) {
  DropSubscriber();
  PmResetForTests();
  std::lock_guard init_lock(InitMutex());
  State& s = S();
  std::lock_guard lock(s.mu);
  s.kinds.clear();
  s.request = nullptr;
  s.complete = nullptr;
  s.thread_id_type.store(CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
  s.current = {};
  s.spares.clear();
  s.completed.clear();
  s.dropped.clear();
  s.next_correlation = 1;
  s.next_marker = 1;
  s.nvtx_hooked = 0;
  s.next_event = 1;
  s.allocations.clear();
  s.stream_free.clear();
  s.pending_external_id.reset();
  initialized.store(false);
}

}  // extern "C"
