// CUPTI's entry points (the ones gpuspy's core resolves, inject/core/cupti_api.h), with the
// signatures of the CUDA 13 headers and the semantics they document. Thin: the work is in
// fake_callbacks (callback API) and fake_activity_buffers (activity API).
#include <cupti.h>

#include "tests/fake_cuda/fake_activity_buffers.h"
#include "tests/fake_cuda/fake_callbacks.h"
#include "tests/fake_cuda/fake_cupti_state.h"

using namespace fake_cupti;

extern "C" {

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                    void* userdata) {
  return Subscribe(subscriber, callback, userdata);
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  return Unsubscribe(subscriber);
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain) {
  return EnableDomain(enable != 0, subscriber, domain);
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return EnableCallback(enable != 0, subscriber, domain, cbid);
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                    CUpti_BuffersCallbackCompleteFunc complete) {
  if (request == nullptr || complete == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard lock(S().mu);
  S().request = request;
  S().complete = complete;
  return CUPTI_SUCCESS;
}

// Any kind is accepted; records come only for the kinds the fake generates.
CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT) {
    return CUPTI_ERROR_INVALID_KIND;
  }
  std::lock_guard lock(S().mu);
  S().kinds.insert(kind);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT) {
    return CUPTI_ERROR_INVALID_KIND;
  }
  std::lock_guard lock(S().mu);
  S().kinds.erase(kind);
  return CUPTI_SUCCESS;
}

// Every record the fake emits is complete when emitted, so the default and the forced flush are
// the same here: all non-empty buffers go back, from the calling thread, before returning.
CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t /*flag*/) {
  FlushAllBuffers();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid_size,
                                                CUpti_Activity** record) {
  return NextRecord(buffer, valid_size, record);
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream_id,
                                                       size_t* dropped) {
  if (dropped == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *dropped = TakeDropped(context, stream_id);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  if (timestamp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *timestamp = Now();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  if (str == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  switch (result) {
#define FAKE_RESULT(r) \
  case r: *str = #r; return CUPTI_SUCCESS;
    FAKE_RESULT(CUPTI_SUCCESS)
    FAKE_RESULT(CUPTI_ERROR_INVALID_PARAMETER)
    FAKE_RESULT(CUPTI_ERROR_INVALID_DEVICE)
    FAKE_RESULT(CUPTI_ERROR_INVALID_CONTEXT)
    FAKE_RESULT(CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID)
    FAKE_RESULT(CUPTI_ERROR_INVALID_EVENT_ID)
    FAKE_RESULT(CUPTI_ERROR_INVALID_EVENT_NAME)
    FAKE_RESULT(CUPTI_ERROR_INVALID_OPERATION)
    FAKE_RESULT(CUPTI_ERROR_OUT_OF_MEMORY)
    FAKE_RESULT(CUPTI_ERROR_HARDWARE)
    FAKE_RESULT(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT)
    FAKE_RESULT(CUPTI_ERROR_API_NOT_IMPLEMENTED)
    FAKE_RESULT(CUPTI_ERROR_MAX_LIMIT_REACHED)
    FAKE_RESULT(CUPTI_ERROR_NOT_READY)
    FAKE_RESULT(CUPTI_ERROR_NOT_COMPATIBLE)
    FAKE_RESULT(CUPTI_ERROR_NOT_INITIALIZED)
    FAKE_RESULT(CUPTI_ERROR_INVALID_METRIC_ID)
    FAKE_RESULT(CUPTI_ERROR_INVALID_METRIC_NAME)
    FAKE_RESULT(CUPTI_ERROR_QUEUE_EMPTY)
    FAKE_RESULT(CUPTI_ERROR_INVALID_HANDLE)
    FAKE_RESULT(CUPTI_ERROR_INVALID_STREAM)
    FAKE_RESULT(CUPTI_ERROR_INVALID_KIND)
    FAKE_RESULT(CUPTI_ERROR_INVALID_EVENT_VALUE)
    FAKE_RESULT(CUPTI_ERROR_DISABLED)
    FAKE_RESULT(CUPTI_ERROR_INVALID_MODULE)
    FAKE_RESULT(CUPTI_ERROR_INVALID_METRIC_VALUE)
    FAKE_RESULT(CUPTI_ERROR_HARDWARE_BUSY)
    FAKE_RESULT(CUPTI_ERROR_NOT_SUPPORTED)
    FAKE_RESULT(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED)
    FAKE_RESULT(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE)
    FAKE_RESULT(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES)
    FAKE_RESULT(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS)
    FAKE_RESULT(CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED)
    FAKE_RESULT(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED)
    FAKE_RESULT(CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE)
    FAKE_RESULT(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    FAKE_RESULT(CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED)
    FAKE_RESULT(CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE)
    FAKE_RESULT(CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED)
    FAKE_RESULT(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    FAKE_RESULT(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES)
    FAKE_RESULT(CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED)
    FAKE_RESULT(CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED)
    FAKE_RESULT(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED)
    FAKE_RESULT(CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED)
    FAKE_RESULT(CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED)
    FAKE_RESULT(CUPTI_ERROR_INVALID_CHIP_NAME)
    FAKE_RESULT(CUPTI_ERROR_UNKNOWN)
#undef FAKE_RESULT
    default: break;
  }
  *str = nullptr;
  return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                          const char** name) {
  if (name == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *name = CallbackName(domain, cbid);
  return *name != nullptr ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  S().thread_id_type.store(type);
  return CUPTI_SUCCESS;
}

// Detaches CUPTI: every kind off, buffers handed back (empty ones too: they are the client's
// memory), the subscriber dropped, so a later cuptiSubscribe works again.
CUptiResult CUPTIAPI cuptiFinalize(void) {
  {
    std::lock_guard lock(S().mu);
    S().kinds.clear();
  }
  DropSubscriber();
  ReturnAllBuffers();
  std::lock_guard lock(S().mu);
  S().request = nullptr;
  S().complete = nullptr;
  return CUPTI_SUCCESS;
}

// CUPTI's NVTX injection entry point (NVTX_INJECTION64_PATH=libcupti.so). The fake's NVTX calls
// (fake_nvtx_*) go straight to the fake, so there is nothing to hook: report success.
int InitializeInjectionNvtx2(void* /*get_export_table*/) { return 1; }

}  // extern "C"
