#include "inject/core/cupti_api.h"

#include <dlfcn.h>

namespace gpuspy::inject {
namespace {

template <typename Fn>
bool Resolve(void* lib, const char* name, Fn* out, bool required, std::string* error) {
  *out = reinterpret_cast<Fn>(dlsym(lib, name));
  if (*out == nullptr && required) {
    *error = std::string("libcupti lacks ") + name;
    return false;
  }
  return true;
}

}  // namespace

bool CuptiApi::Load(const std::string& path, std::string* error) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    *error = "cannot load CUPTI from " + path + ": " + (why != nullptr ? why : "unknown error");
    return false;
  }
  return Resolve(lib, "cuptiSubscribe", &Subscribe, true, error) &&
         Resolve(lib, "cuptiUnsubscribe", &Unsubscribe, true, error) &&
         Resolve(lib, "cuptiEnableDomain", &EnableDomain, true, error) &&
         Resolve(lib, "cuptiEnableCallback", &EnableCallback, true, error) &&
         Resolve(lib, "cuptiActivityRegisterCallbacks", &ActivityRegisterCallbacks, true, error) &&
         Resolve(lib, "cuptiActivityEnable", &ActivityEnable, true, error) &&
         Resolve(lib, "cuptiActivityDisable", &ActivityDisable, true, error) &&
         Resolve(lib, "cuptiActivityFlushAll", &ActivityFlushAll, true, error) &&
         Resolve(lib, "cuptiActivityGetNextRecord", &ActivityGetNextRecord, true, error) &&
         Resolve(lib, "cuptiActivityGetNumDroppedRecords", &ActivityGetNumDroppedRecords, true,
                 error) &&
         Resolve(lib, "cuptiGetTimestamp", &GetTimestamp, true, error) &&
         Resolve(lib, "cuptiGetResultString", &GetResultString, true, error) &&
         Resolve(lib, "cuptiGetCallbackName", &GetCallbackName, false, error) &&
         Resolve(lib, "cuptiSetThreadIdType", &SetThreadIdType, false, error) &&
         Resolve(lib, "cuptiFinalize", &Finalize, false, error) &&
         Resolve(lib, "cuptiGetDeviceId", &GetDeviceId, false, error) &&
         Resolve(lib, "cuptiProfilerInitialize", &pm.ProfilerInitialize, false, error) &&
         Resolve(lib, "cuptiDeviceGetChipName", &pm.DeviceGetChipName, false, error) &&
         Resolve(lib, "cuptiPmSamplingGetCounterAvailability", &pm.GetCounterAvailability, false,
                 error) &&
         Resolve(lib, "cuptiProfilerHostInitialize", &pm.HostInitialize, false, error) &&
         Resolve(lib, "cuptiProfilerHostDeinitialize", &pm.HostDeinitialize, false, error) &&
         Resolve(lib, "cuptiProfilerHostConfigAddMetrics", &pm.HostConfigAddMetrics, false, error) &&
         Resolve(lib, "cuptiProfilerHostGetConfigImageSize", &pm.HostGetConfigImageSize, false,
                 error) &&
         Resolve(lib, "cuptiProfilerHostGetConfigImage", &pm.HostGetConfigImage, false, error) &&
         Resolve(lib, "cuptiProfilerHostGetNumOfPasses", &pm.HostGetNumOfPasses, false, error) &&
         Resolve(lib, "cuptiProfilerHostEvaluateToGpuValues", &pm.HostEvaluateToGpuValues, false,
                 error) &&
         Resolve(lib, "cuptiPmSamplingEnable", &pm.Enable, false, error) &&
         Resolve(lib, "cuptiPmSamplingSetConfig", &pm.SetConfig, false, error) &&
         Resolve(lib, "cuptiPmSamplingGetCounterDataSize", &pm.GetCounterDataSize, false, error) &&
         Resolve(lib, "cuptiPmSamplingCounterDataImageInitialize", &pm.CounterDataImageInitialize,
                 false, error) &&
         Resolve(lib, "cuptiPmSamplingStart", &pm.Start, false, error) &&
         Resolve(lib, "cuptiPmSamplingStop", &pm.Stop, false, error) &&
         Resolve(lib, "cuptiPmSamplingDecodeData", &pm.DecodeData, false, error) &&
         Resolve(lib, "cuptiPmSamplingGetCounterDataInfo", &pm.GetCounterDataInfo, false, error) &&
         Resolve(lib, "cuptiPmSamplingCounterDataGetSampleInfo", &pm.GetSampleInfo, false, error);
}

bool CuptiApi::PmSampling::complete() const {
  return ProfilerInitialize && DeviceGetChipName && GetCounterAvailability && HostInitialize &&
         HostDeinitialize && HostConfigAddMetrics && HostGetConfigImageSize && HostGetConfigImage &&
         HostGetNumOfPasses && HostEvaluateToGpuValues && Enable && SetConfig &&
         GetCounterDataSize && CounterDataImageInitialize && Start && Stop && DecodeData &&
         GetCounterDataInfo && GetSampleInfo;
}

std::string CuptiApi::ResultString(CUptiResult result) const {
  const char* text = nullptr;
  if (GetResultString != nullptr && GetResultString(result, &text) == CUPTI_SUCCESS &&
      text != nullptr) {
    return text;
  }
  return "CUPTI error " + std::to_string(static_cast<int>(result));
}

}  // namespace gpuspy::inject
