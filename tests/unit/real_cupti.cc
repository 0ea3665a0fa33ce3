#include "tests/unit/real_cupti.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <type_traits>
#include <utility>

namespace gpuspy::testing {
namespace {

// Far more records than any test buffer holds: a walker still going after this is looping.
constexpr size_t kMaxWalkSteps = 100000;

size_t Padded(size_t n) { return (n + 7) / 8 * 8; }

RealCupti* Load(std::string* why) {
  const char* env = std::getenv("GPUSPY_TEST_REAL_CUPTI");
  const std::string path = env != nullptr && *env != '\0' ? env : REAL_CUPTI_LIB;
  if (path.empty()) {
    *why = "the CUDA toolkit's libcupti was not found at configure time (CUDA_cupti_LIBRARY)";
    return nullptr;
  }
  if (access(path.c_str(), R_OK) != 0) {
    *why = "the CUDA toolkit's libcupti is absent: " + path;
    return nullptr;
  }
  // By path and RTLD_LOCAL: a test may also link the fake libcupti.so.13, whose soname the loader
  // would otherwise hand back instead.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    *why = std::string("cannot load ") + path + ": " + dlerror();
    return nullptr;
  }
  RealCupti api{path};
  api.next_record = reinterpret_cast<NextRecordFn>(dlsym(lib, "cuptiActivityGetNextRecord"));
  api.callback_name =
      reinterpret_cast<decltype(&::cuptiGetCallbackName)>(dlsym(lib, "cuptiGetCallbackName"));
  api.version = reinterpret_cast<decltype(&::cuptiGetVersion)>(dlsym(lib, "cuptiGetVersion"));
  auto optional = [&](const char* name, auto* out) {
    *out = reinterpret_cast<std::remove_reference_t<decltype(*out)>>(dlsym(lib, name));
  };
  optional("cuptiProfilerHostInitialize", &api.host_initialize);
  optional("cuptiProfilerHostDeinitialize", &api.host_deinitialize);
  optional("cuptiProfilerHostConfigAddMetrics", &api.host_add_metrics);
  optional("cuptiProfilerHostGetMetricProperties", &api.host_metric_properties);
  if (api.next_record == nullptr || api.callback_name == nullptr || api.version == nullptr) {
    *why = path + " lacks an entry point the oracle needs";
    return nullptr;
  }
  return new RealCupti(std::move(api));  // lives as long as the test process, like the library
}

}  // namespace

const RealCupti* LoadRealCupti(std::string* why) {
  static std::string reason;
  static const RealCupti* api = Load(&reason);
  if (api == nullptr && why != nullptr) *why = reason;
  return api;
}

Walk WalkBuffer(NextRecordFn next, uint8_t* buffer, size_t valid_bytes) {
  Walk w;
  CUpti_Activity* record = nullptr;
  for (size_t i = 0; i < kMaxWalkSteps; ++i) {
    w.end = next(buffer, valid_bytes, &record);
    if (w.end != CUPTI_SUCCESS) return w;
    w.offsets.push_back(static_cast<size_t>(reinterpret_cast<uint8_t*>(record) - buffer));
    w.kinds.push_back(record->kind);
  }
  w.end = CUPTI_ERROR_UNKNOWN;  // never stopped
  return w;
}

std::string Describe(const Walk& w) {
  std::ostringstream s;
  for (size_t i = 0; i < w.offsets.size(); ++i) {
    s << w.offsets[i] << ":kind" << static_cast<int>(w.kinds[i]) << " ";
  }
  s << "end=" << static_cast<int>(w.end);
  return s.str();
}

uint8_t* RecordBuffer::Append(CUpti_ActivityKind kind, size_t bytes) {
  const size_t at = used_;
  used_ += Padded(bytes);
  words_.resize(used_ / sizeof(uint64_t), 0);
  uint8_t* record = data() + at;
  reinterpret_cast<CUpti_Activity*>(record)->kind = kind;
  offsets_.push_back(at);
  return record;
}

}  // namespace gpuspy::testing
