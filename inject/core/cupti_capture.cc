#include "inject/core/cupti_capture.h"

#include <execinfo.h>
#include <time.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "client/log/log_line.h"
#include "inject/core/activity_parser.h"

namespace gpuspy::inject {
namespace {

// Activity kinds per configured capture kind. CONCURRENT_KERNEL (not KERNEL): KERNEL serializes
// all kernels on the device, which would change what we measure.
struct KindSwitch {
  bool CaptureKinds::*enabled;
  CUpti_ActivityKind kind;
};
constexpr KindSwitch kKinds[] = {
    {&CaptureKinds::kernel, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
    {&CaptureKinds::memcpy, CUPTI_ACTIVITY_KIND_MEMCPY},
    {&CaptureKinds::memcpy, CUPTI_ACTIVITY_KIND_MEMCPY2},
    {&CaptureKinds::memset, CUPTI_ACTIVITY_KIND_MEMSET},
    {&CaptureKinds::sync, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},
    {&CaptureKinds::memory, CUPTI_ACTIVITY_KIND_MEMORY2},
    {&CaptureKinds::memory, CUPTI_ACTIVITY_KIND_MEMORY_POOL},
    {&CaptureKinds::graph, CUPTI_ACTIVITY_KIND_GRAPH_TRACE},
    {&CaptureKinds::runtime, CUPTI_ACTIVITY_KIND_RUNTIME},
    {&CaptureKinds::driver, CUPTI_ACTIVITY_KIND_DRIVER},
    {&CaptureKinds::nvtx, CUPTI_ACTIVITY_KIND_MARKER},
    {&CaptureKinds::overhead, CUPTI_ACTIVITY_KIND_OVERHEAD},
};

// The calls that get a call site. Blocking: explicit synchronizations; copies that can wait for
// the GPU or stage through pageable memory (synchronous copies, and async ones, which CUDA makes
// synchronous when the host side is pageable); implicit synchronizations (cudaFree,
// cudaFreeHost). Launch: kernel and graph launches, sampled (call_sites.h).
struct CallSiteCall {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  CallSiteKind kind;
};
#define GPUSPY_RT(name, k) {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##name, CallSiteKind::k}
#define GPUSPY_DRV(name, k) {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##name, CallSiteKind::k}
constexpr CallSiteCall kCallSiteCalls[] = {
    GPUSPY_RT(cudaDeviceSynchronize_v3020, kBlocking),
    GPUSPY_RT(cudaThreadSynchronize_v3020, kBlocking),
    GPUSPY_RT(cudaStreamSynchronize_v3020, kBlocking),
    GPUSPY_RT(cudaStreamSynchronize_ptsz_v7000, kBlocking),
    GPUSPY_RT(cudaEventSynchronize_v3020, kBlocking),
    GPUSPY_RT(cudaMemcpy_v3020, kBlocking),
    GPUSPY_RT(cudaMemcpy_ptds_v7000, kBlocking),
    GPUSPY_RT(cudaMemcpyAsync_v3020, kBlocking),
    GPUSPY_RT(cudaMemcpyAsync_ptsz_v7000, kBlocking),
    GPUSPY_RT(cudaMemcpy2D_v3020, kBlocking),
    GPUSPY_RT(cudaMemcpy2DAsync_v3020, kBlocking),
    GPUSPY_RT(cudaMemcpy2DToArray_v3020, kBlocking),
    GPUSPY_RT(cudaMemcpy2DFromArray_v3020, kBlocking),
    GPUSPY_RT(cudaMemcpy3D_v3020, kBlocking),
    GPUSPY_RT(cudaMemcpyToSymbol_v3020, kBlocking),
    GPUSPY_RT(cudaMemcpyFromSymbol_v3020, kBlocking),
    GPUSPY_RT(cudaMemcpyToSymbolAsync_v3020, kBlocking),
    GPUSPY_RT(cudaMemcpyFromSymbolAsync_v3020, kBlocking),
    GPUSPY_RT(cudaMemcpyPeer_v4000, kBlocking),
    GPUSPY_RT(cudaMemset_v3020, kBlocking),
    GPUSPY_RT(cudaFree_v3020, kBlocking),
    GPUSPY_RT(cudaFreeHost_v3020, kBlocking),
    GPUSPY_RT(cudaFreeArray_v3020, kBlocking),
    GPUSPY_RT(cudaLaunchKernel_v7000, kLaunch),
    GPUSPY_RT(cudaLaunchKernel_ptsz_v7000, kLaunch),
    GPUSPY_RT(cudaLaunchKernelExC_v11060, kLaunch),
    GPUSPY_RT(cudaLaunchKernelExC_ptsz_v11060, kLaunch),
    GPUSPY_RT(__cudaLaunchKernel_v13000, kLaunch),
    GPUSPY_RT(cudaLaunchCooperativeKernel_v9000, kLaunch),
    GPUSPY_RT(cudaGraphLaunch_v10000, kLaunch),
    GPUSPY_RT(cudaGraphLaunch_ptsz_v10000, kLaunch),
    GPUSPY_DRV(cuCtxSynchronize, kBlocking),
    GPUSPY_DRV(cuStreamSynchronize, kBlocking),
    GPUSPY_DRV(cuStreamSynchronize_ptsz, kBlocking),
    GPUSPY_DRV(cuEventSynchronize, kBlocking),
    GPUSPY_DRV(cuMemcpy, kBlocking),
    GPUSPY_DRV(cuMemcpy_ptds, kBlocking),
    GPUSPY_DRV(cuMemcpyAsync, kBlocking),
    GPUSPY_DRV(cuMemcpyAsync_ptsz, kBlocking),
    GPUSPY_DRV(cuMemcpyDtoH_v2, kBlocking),
    GPUSPY_DRV(cuMemcpyDtoH_v2_ptds, kBlocking),
    GPUSPY_DRV(cuMemcpyHtoD_v2, kBlocking),
    GPUSPY_DRV(cuMemcpyHtoD_v2_ptds, kBlocking),
    GPUSPY_DRV(cuMemcpyDtoHAsync_v2, kBlocking),
    GPUSPY_DRV(cuMemcpyDtoHAsync_v2_ptsz, kBlocking),
    GPUSPY_DRV(cuMemcpyHtoDAsync_v2, kBlocking),
    GPUSPY_DRV(cuMemcpyHtoDAsync_v2_ptsz, kBlocking),
    GPUSPY_DRV(cuMemFree_v2, kBlocking),
    GPUSPY_DRV(cuMemFreeHost, kBlocking),
    GPUSPY_DRV(cuLaunchKernel, kLaunch),
    GPUSPY_DRV(cuLaunchKernel_ptsz, kLaunch),
    GPUSPY_DRV(cuLaunchKernelEx, kLaunch),
    GPUSPY_DRV(cuLaunchKernelEx_ptsz, kLaunch),
    GPUSPY_DRV(cuLaunchCooperativeKernel, kLaunch),
    GPUSPY_DRV(cuGraphLaunch, kLaunch),
    GPUSPY_DRV(cuGraphLaunch_ptsz, kLaunch),
};
#undef GPUSPY_RT
#undef GPUSPY_DRV

// cbid -> kind, per API domain, for the callback's one lookup.
struct CallSiteKinds {
  std::vector<CallSiteKind> runtime, driver;
  CallSiteKinds() : runtime(CUPTI_RUNTIME_TRACE_CBID_SIZE), driver(CUPTI_DRIVER_TRACE_CBID_SIZE) {
    for (const CallSiteCall& c : kCallSiteCalls) {
      (c.domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime : driver)[c.cbid] = c.kind;
    }
  }
  CallSiteKind Of(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) const {
    const std::vector<CallSiteKind>& v = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime : driver;
    return cbid < v.size() ? v[cbid] : CallSiteKind::kNone;
  }
};
const CallSiteKinds& CallSiteKindTable() {
  static const CallSiteKinds* table = new CallSiteKinds();
  return *table;
}

}  // namespace

CuptiCapture& CuptiCapture::Instance() {
  static CuptiCapture* instance = new CuptiCapture();  // never destroyed: see pool_
  return *instance;
}

absl::Status CuptiCapture::Check(CUptiResult result, const char* what) const {
  if (result == CUPTI_SUCCESS) return absl::OkStatus();
  // CUPTI's only word for "this driver is older than my toolkit needs" (CUPTI docs, "CUPTI
  // Compatibility and Requirements"); without the hint users chase the wrong cause.
  const char* hint = result == CUPTI_ERROR_NOT_INITIALIZED
                         ? " (is the CUDA driver older than this CUPTI's toolkit requires?)"
                         : "";
  return absl::InternalError(absl::StrCat(what, ": ", api_.ResultString(result), hint));
}

absl::Status CuptiCapture::Start(const CoreConfig& config, const std::string& cupti_path) {
  std::string error;
  if (!api_.Load(cupti_path, &error)) return absl::UnavailableError(error);
  // A session started again after Stop (gpuspy detach, then attach) keeps the first one's pool and
  // call sites: CUPTI may still hold buffers of the pool, and both are leaked on purpose anyway.
  if (pool_ == nullptr) pool_ = new BufferPool(config.buffer_bytes, config.max_buffers);

  const CUptiResult sub = api_.Subscribe(&subscriber_, &CuptiCapture::OnCallback, this);
  if (sub == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    // Name the code too: it is what a user searches for, and what NVIDIA's docs index.
    return absl::FailedPreconditionError(
        "CUPTI is already in use by another profiler (torch.profiler, Nsight Systems, ...): "
        "cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
  }
  if (absl::Status st = Check(sub, "cuptiSubscribe"); !st.ok()) return st;
  // Context teardown is the last reliable moment to flush (exit-time flushing is fragile).
  if (absl::Status st = Check(api_.EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                                                  CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING),
                              "cuptiEnableCallback(context destroy)");
      !st.ok()) {
    return st;
  }
  if (api_.SetThreadIdType != nullptr) {
    // OS thread ids (what `top -H` and py-spy show), not pthread_t values.
    (void)api_.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  }
  if (absl::Status st = Check(api_.ActivityRegisterCallbacks(&CuptiCapture::OnBufferRequested,
                                                             &CuptiCapture::OnBufferCompleted),
                              "cuptiActivityRegisterCallbacks");
      !st.ok()) {
    return st;
  }
  // Device and context records describe the hardware and map contexts to devices; external
  // correlations cost nothing unless a framework pushes ids (then they link ops to kernels).
  for (CUpti_ActivityKind k : {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT,
                               CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION}) {
    if (api_.ActivityEnable(k) != CUPTI_SUCCESS) {
      Log(LogLevel::kDebug, "activity kind %d not available", static_cast<int>(k));
    }
  }
  if (config.call_sites.enabled && call_sites_ == nullptr) {
    CallSiteConfig sites = config.call_sites;
    if (char cwd[4096]; sites.frames.base_dir.empty() && getcwd(cwd, sizeof(cwd)) != nullptr) {
      sites.frames.base_dir = cwd;
    }
    (void)CallSiteKindTable();
    if (sites.frames.native) {
      // glibc loads libgcc_s on the first backtrace(): here, not inside an application's call.
      void* frames[2];
      (void)backtrace(frames, 2);
    }
    call_sites_ = new CallSites(std::move(sites));
  }
  if (config.counters.enabled && counters_ == nullptr) {
    counters_ = new CounterSampler(&api_.pm, config.counters, [this] { return Now(); });
  }
  if (counters_ != nullptr) {
    // Sampling starts when a device's context is created (the pipeline thread acts on it), not
    // when its first kernel records arrive, which may be only at a buffer's end.
    (void)api_.EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                              CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  }
  if (config.mode == CaptureMode::kAlways) EnableKinds(config.kinds);
  return absl::OkStatus();
}

void CuptiCapture::EnableKinds(const CaptureKinds& kinds) {
  if (inert_.load()) return;
  std::lock_guard lock(kinds_mu_);
  kinds_ = kinds;
  for (const KindSwitch& s : kKinds) {
    if (!(kinds_.*s.enabled)) continue;
    const CUptiResult r = api_.ActivityEnable(s.kind);
    if (r != CUPTI_SUCCESS) {
      // One missing kind (an older driver) must not cost the rest of the capture.
      Log(LogLevel::kWarn, "cannot enable activity kind %d: %s", static_cast<int>(s.kind),
          api_.ResultString(r).c_str());
    }
  }
  EnableCallSiteCallbacks(kinds_, true);
  collecting_.store(true);
}

void CuptiCapture::EnableCallSiteCallbacks(const CaptureKinds& kinds, bool enable) {
  if (call_sites_ == nullptr || call_site_callbacks_ == enable) return;
  call_site_callbacks_ = enable;
  call_sites_->SetWatching(enable);
  for (const CallSiteCall& c : kCallSiteCalls) {
    // A call site joins its API record: without the domain's records there is nothing to join.
    if (!(c.domain == CUPTI_CB_DOMAIN_RUNTIME_API ? kinds.runtime : kinds.driver)) continue;
    if (c.kind == CallSiteKind::kLaunch && !call_sites_->config().launch_auto &&
        call_sites_->config().launch_period == 0) {
      continue;
    }
    const CUptiResult r = api_.EnableCallback(enable ? 1 : 0, subscriber_, c.domain, c.cbid);
    if (r != CUPTI_SUCCESS) {
      Log(LogLevel::kDebug, "cannot switch the callback of cbid %u: %s", static_cast<unsigned>(c.cbid),
          api_.ResultString(r).c_str());
    }
  }
}

MakeRecordParser CuptiCapture::record_parser() const {
  return [api = &api_](StringTable* strings) -> std::unique_ptr<RecordParser> {
    return std::make_unique<ActivityParser>(api, strings);
  };
}

int64_t CuptiCapture::Now() const {
  uint64_t t = 0;
  if (api_.GetTimestamp != nullptr && api_.GetTimestamp(&t) == CUPTI_SUCCESS) {
    return static_cast<int64_t>(t);
  }
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void CuptiCapture::StopCollection() {
  std::lock_guard lock(kinds_mu_);
  if (!collecting_.exchange(false)) return;
  EnableCallSiteCallbacks(kinds_, false);
  for (const KindSwitch& s : kKinds) {
    if (kinds_.*s.enabled) (void)api_.ActivityDisable(s.kind);
  }
}

void CuptiCapture::Stop() {
  StopCollection();
  // Without our subscription the buffers are another profiler's: leave them alone.
  if (subscriber_ == nullptr) return;
  Flush(true);
  (void)api_.EnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                            CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  if (counters_ != nullptr) {
    (void)api_.EnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_RESOURCE,
                              CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  }
  (void)api_.Unsubscribe(subscriber_);
  subscriber_ = nullptr;
}

void CuptiCapture::Flush(bool forced) {
  if (inert_.load() || api_.ActivityFlushAll == nullptr) return;
  (void)api_.ActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

void CUPTIAPI CuptiCapture::OnBufferRequested(uint8_t** buffer, size_t* size,
                                              size_t* max_records) {
  CuptiCapture& self = Instance();
  *max_records = 0;  // as many as fit
  *buffer = self.inert_.load() || self.pool_ == nullptr ? nullptr : self.pool_->Acquire();
  *size = *buffer != nullptr ? self.pool_->buffer_bytes() : 0;
}

void CUPTIAPI CuptiCapture::OnBufferCompleted(CUcontext context, uint32_t stream_id,
                                              uint8_t* buffer, size_t /*size*/,
                                              size_t valid_size) {
  CuptiCapture& self = Instance();
  size_t dropped = 0;
  if (self.api_.ActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    self.dropped_records_.fetch_add(dropped, std::memory_order_relaxed);
  }
  if (buffer == nullptr) return;
  if (self.inert_.load() || valid_size == 0) {
    self.pool_->Release(buffer);
    return;
  }
  self.completed_.Push({buffer, valid_size});
}

bool CuptiCapture::ContextDevice(const void* resource_data, uint32_t* device) const {
  const auto* resource = static_cast<const CUpti_ResourceData*>(resource_data);
  return resource != nullptr && api_.GetDeviceId != nullptr &&
         api_.GetDeviceId(resource->context, device) == CUPTI_SUCCESS;
}

void CUPTIAPI CuptiCapture::OnCallback(void* userdata, CUpti_CallbackDomain domain,
                                       CUpti_CallbackId cbid, const void* data) {
  auto* self = static_cast<CuptiCapture*>(userdata);
  if (self->inert_.load(std::memory_order_relaxed)) return;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    CallSites* sites = self->call_sites_;
    const auto* call = static_cast<const CUpti_CallbackData*>(data);
    if (sites == nullptr || call == nullptr) return;
    const CallSiteKind kind = CallSiteKindTable().Of(domain, cbid);
    if (call->callbackSite == CUPTI_API_ENTER) {
      sites->OnEnter(kind, call->correlationId);
    } else {
      sites->OnExit(kind);
    }
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    if (uint32_t device = 0; self->counters_ != nullptr && self->ContextDevice(data, &device)) {
      self->counters_->NoteContextCreated(device);
    }
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
    self->Flush(true);
    if (uint32_t device = 0; self->counters_ != nullptr && self->ContextDevice(data, &device)) {
      self->counters_->OnContextDestroying(device);
    }
  }
}

}  // namespace gpuspy::inject
