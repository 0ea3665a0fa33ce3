#include "inject/core/cupti_capture.h"

#include <time.h>

#include "absl/strings/str_cat.h"
#include "inject/core/core_log.h"

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
  pool_ = new BufferPool(config.buffer_bytes, config.max_buffers);

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
  collecting_.store(true);
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
  for (const KindSwitch& s : kKinds) {
    if (kinds_.*s.enabled) (void)api_.ActivityDisable(s.kind);
  }
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

void CUPTIAPI CuptiCapture::OnCallback(void* userdata, CUpti_CallbackDomain domain,
                                       CUpti_CallbackId cbid, const void* /*data*/) {
  auto* self = static_cast<CuptiCapture*>(userdata);
  if (self->inert_.load()) return;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
    self->Flush(true);
  }
}

}  // namespace gpuspy::inject
