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
         Resolve(lib, "cuptiFinalize", &Finalize, false, error);
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
