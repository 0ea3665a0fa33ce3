// The CUPTI entry points gpuspy uses, resolved with dlopen/dlsym at run time.
//
// Why not link libcupti: it lives in different places per installation (toolkit, pip wheels,
// conda) and often not on the loader's path; the stub finds it and passes the path. Why one
// table: this file (with cupti_capture.cc and activity_parser.cc) is the only place CUPTI's API is
// called, so the rest of the core sees gpuspy's own types.
#pragma once

#include <cupti.h>

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

  // Loads `path` RTLD_LOCAL and resolves every entry point. On failure returns false and says
  // why in `error`; the table is then unusable.
  bool Load(const std::string& path, std::string* error);
  // "CUPTI_ERROR_..." text for a result code (works before Load succeeds, as a number).
  std::string ResultString(CUptiResult result) const;
};

}  // namespace gpuspy::inject
