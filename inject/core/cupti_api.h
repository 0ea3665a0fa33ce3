// The CUPTI entry points gpuspy uses, resolved with dlopen/dlsym at run time.
//
// Why not link libcupti: it lives in different places per installation (toolkit, pip wheels,
// conda) and often not on the loader's path; the stub finds it and passes the path. Why one
// table: this file (with cupti_capture.cc and activity_parser.cc) is the only place CUPTI's API is
// called, so the rest of the core sees gpuspy's own types.
#pragma once

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <string>

namespace gpuspy::inject {

struct CuptiApi {
  decltype(&::cuptiSubscribe) Subscribe = nullptr;
  decltype(&::cuptiUnsubscribe) Unsubscribe = nullptr;
  decltype(&::cuptiEnableDomain) EnableDomain = nullptr;
  decltype(&::cuptiEnableCallback) EnableCallback = nullptr;
  decltype(&::cuptiActivityRegisterCallbacks) ActivityRegisterCallbacks = nullptr;
  decltype(&::cuptiActivityEnable) ActivityEnable = nullptr;
  decltype(&::cuptiActivityDisable) ActivityDisable = nullptr;
  decltype(&::cuptiActivityFlushAll) ActivityFlushAll = nullptr;
  decltype(&::cuptiActivityGetNextRecord) ActivityGetNextRecord = nullptr;
  decltype(&::cuptiActivityGetNumDroppedRecords) ActivityGetNumDroppedRecords = nullptr;
  decltype(&::cuptiGetTimestamp) GetTimestamp = nullptr;
  decltype(&::cuptiGetResultString) GetResultString = nullptr;
  decltype(&::cuptiGetCallbackName) GetCallbackName = nullptr;  // optional
  decltype(&::cuptiSetThreadIdType) SetThreadIdType = nullptr;  // optional
  decltype(&::cuptiFinalize) Finalize = nullptr;                // optional
  decltype(&::cuptiGetDeviceId) GetDeviceId = nullptr;          // optional

  // PM sampling (CUDA 12.6+ CUPTI), for the hardware counters (counter_sampler.h); all optional:
  // an older CUPTI lacks them and the counters are then off, the tracing unaffected.
  struct PmSampling {
    decltype(&::cuptiProfilerInitialize) ProfilerInitialize = nullptr;
    decltype(&::cuptiDeviceGetChipName) DeviceGetChipName = nullptr;
    decltype(&::cuptiPmSamplingGetCounterAvailability) GetCounterAvailability = nullptr;
    decltype(&::cuptiProfilerHostInitialize) HostInitialize = nullptr;
    decltype(&::cuptiProfilerHostDeinitialize) HostDeinitialize = nullptr;
    decltype(&::cuptiProfilerHostConfigAddMetrics) HostConfigAddMetrics = nullptr;
    decltype(&::cuptiProfilerHostGetConfigImageSize) HostGetConfigImageSize = nullptr;
    decltype(&::cuptiProfilerHostGetConfigImage) HostGetConfigImage = nullptr;
    decltype(&::cuptiProfilerHostGetNumOfPasses) HostGetNumOfPasses = nullptr;
    decltype(&::cuptiProfilerHostEvaluateToGpuValues) HostEvaluateToGpuValues = nullptr;
    decltype(&::cuptiPmSamplingEnable) Enable = nullptr;
    decltype(&::cuptiPmSamplingSetConfig) SetConfig = nullptr;
    decltype(&::cuptiPmSamplingGetCounterDataSize) GetCounterDataSize = nullptr;
    decltype(&::cuptiPmSamplingCounterDataImageInitialize) CounterDataImageInitialize = nullptr;
    decltype(&::cuptiPmSamplingStart) Start = nullptr;
    decltype(&::cuptiPmSamplingStop) Stop = nullptr;
    decltype(&::cuptiPmSamplingDecodeData) DecodeData = nullptr;
    decltype(&::cuptiPmSamplingGetCounterDataInfo) GetCounterDataInfo = nullptr;
    decltype(&::cuptiPmSamplingCounterDataGetSampleInfo) GetSampleInfo = nullptr;
    // Every entry resolved.
    bool complete() const;
  } pm;

  // Loads `path` RTLD_LOCAL and resolves every entry point. On failure returns false and says
  // why in `error`; the table is then unusable.
  bool Load(const std::string& path, std::string* error);
  // "CUPTI_ERROR_..." text for a result code (works before Load succeeds, as a number).
  std::string ResultString(CUptiResult result) const;
};

}  // namespace gpuspy::inject
