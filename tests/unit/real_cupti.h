// The CUDA toolkit's own libcupti.so.13, for the part of it that runs without a GPU: the activity
// buffer walker, result strings, callback names. Tests use it as an oracle that cannot share a
// misunderstanding with gpuspy's parser or with the fake CUPTI (tests/fake_cuda), which were
// written from the same reading of the headers.
#pragma once

#include <cupti.h>
#include <cupti_profiler_host.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuspy::testing {

struct RealCupti {
  std::string path;
  decltype(&::cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&::cuptiGetCallbackName) callback_name = nullptr;
  decltype(&::cuptiGetVersion) version = nullptr;
  // The profiler host API (CUDA 12.6+), which needs no GPU: null in an older libcupti.
  decltype(&::cuptiProfilerHostInitialize) host_initialize = nullptr;
  decltype(&::cuptiProfilerHostDeinitialize) host_deinitialize = nullptr;
  decltype(&::cuptiProfilerHostConfigAddMetrics) host_add_metrics = nullptr;
  decltype(&::cuptiProfilerHostGetMetricProperties) host_metric_properties = nullptr;
};

// The toolkit's libcupti (REAL_CUPTI_LIB at build time, GPUSPY_TEST_REAL_CUPTI overrides), loaded
// once. nullptr when it cannot be loaded; `why` then says so, for GTEST_SKIP.
const RealCupti* LoadRealCupti(std::string* why);

// What a walker made of a buffer: where each record starts, its kind, and the status that ended
// the walk.
struct Walk {
  std::vector<size_t> offsets;
  std::vector<CUpti_ActivityKind> kinds;
  CUptiResult end = CUPTI_SUCCESS;
  friend bool operator==(const Walk&, const Walk&) = default;
};
using NextRecordFn = decltype(&::cuptiActivityGetNextRecord);
// Walks with `next` until it stops (bounded, so a walker that never stops fails instead of hangs).
Walk WalkBuffer(NextRecordFn next, uint8_t* buffer, size_t valid_bytes);
std::string Describe(const Walk& w);

// Records back to back, each padded to 8 bytes, as CUPTI lays them out. `Add` returns a
// reference valid until the next Add.
class RecordBuffer {
 public:
  template <typename T>
  T& Add(CUpti_ActivityKind kind) {
    uint8_t* at = Append(kind, sizeof(T));
    return *reinterpret_cast<T*>(at);
  }
  // A record of `kind` whose struct is taken to be `bytes` long (zero-filled but for the kind).
  uint8_t* Append(CUpti_ActivityKind kind, size_t bytes);
  uint8_t* data() { return reinterpret_cast<uint8_t*>(words_.data()); }
  size_t size() const { return used_; }
  const std::vector<size_t>& offsets() const { return offsets_; }

 private:
  std::vector<uint64_t> words_;  // 8-byte aligned storage, as CUPTI requires of buffers
  size_t used_ = 0;
  std::vector<size_t> offsets_;
};

}  // namespace gpuspy::testing
