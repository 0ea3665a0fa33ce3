// The fake PM sampler. A sample over [a, b) reads, for each counter, the time-weighted sum of the
// kernels' profiles over their overlap with [a, b), divided by b - a (capped at 100%): what a real
// monitor reports for one kernel at a time on the device. sm and gpu activity are the covered
// share of the interval. Samples complete as the real clock passes their end, as on a GPU.
#include "tests/fake_cuda/fake_pm_sampling.h"

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "tests/fake_cuda/fake_cuda.h"
#include "tests/fake_cuda/fake_cupti_state.h"

namespace fake_cupti {
namespace {

// The metrics this fake chip knows, and what each reads of a sample.
enum Field { kTensor, kDram, kSm, kGpu };
struct KnownMetric {
  const char* name;
  Field field;
};
constexpr KnownMetric kKnown[] = {
    {"sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", kTensor},
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", kDram},
    {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", kSm},
    {"gr__cycles_active.avg.pct_of_peak_sustained_elapsed", kGpu},
};
const char* const kChip = "GH100";

struct Span {
  uint64_t start, end;
  float tensor, dram;
};
struct Sample {
  uint64_t start, end;
  double values[4];
};
// The counter data image's layout (the client treats it as opaque bytes).
struct ImageHeader {
  uint32_t capacity;
  uint32_t count;
};

struct HostObject {
  std::vector<Field> fields;
};

struct Pm {
  std::mutex mu;
  float tensor = 0, dram = 0;  // the profile of kernels launched from now on
  bool running = false;
  uint64_t interval_ns = 1'000'000;
  uint64_t next_sample = 0;  // start of the first sample not yet decoded
  std::deque<Span> spans;
  int enabled_objects = 0;
};
Pm& P() {
  static Pm* pm = new Pm();
  return *pm;
}
// The one PM sampling object (device 0), as an opaque handle.
CUpti_PmSampling_Object* const kObject = reinterpret_cast<CUpti_PmSampling_Object*>(0x504d);

Sample Measure(uint64_t a, uint64_t b, const std::deque<Span>& spans) {
  Sample s{a, b, {0, 0, 0, 0}};
  const double len = static_cast<double>(b - a);
  double covered = 0, tensor = 0, dram = 0;
  for (const Span& k : spans) {
    const uint64_t lo = std::max(a, k.start), hi = std::min(b, k.end);
    if (hi <= lo) continue;
    const double o = static_cast<double>(hi - lo);
    covered += o;
    tensor += o * k.tensor;
    dram += o * k.dram;
  }
  s.values[kTensor] = std::min(100.0, tensor / len);
  s.values[kDram] = std::min(100.0, dram / len);
  s.values[kSm] = std::min(100.0, 100.0 * covered / len);
  s.values[kGpu] = s.values[kSm];
  return s;
}

bool Known(const char* name, Field* field) {
  for (const KnownMetric& m : kKnown) {
    if (name != nullptr && std::strcmp(name, m.name) == 0) {
      *field = m.field;
      return true;
    }
  }
  return false;
}

}  // namespace

void PmRecordKernel(uint64_t start, uint64_t end) {
  Pm& p = P();
  std::lock_guard lock(p.mu);
  if (end <= start) return;
  // Kept whether or not sampling runs: a kernel enqueued just before sampling starts still runs
  // inside its first samples, as on a GPU. Spans over a second old are no sample's any more.
  const uint64_t horizon = Now() - std::min<uint64_t>(Now(), 1'000'000'000);
  while (!p.running && !p.spans.empty() && p.spans.front().end < horizon) p.spans.pop_front();
  p.spans.push_back({start, end, p.tensor, p.dram});
}

void PmResetForTests() {
  Pm& p = P();
  std::lock_guard lock(p.mu);
  p.tensor = p.dram = 0;
  p.running = false;
  p.interval_ns = 1'000'000;
  p.next_sample = 0;
  p.spans.clear();
  p.enabled_objects = 0;
}

}  // namespace fake_cupti

using namespace fake_cupti;

extern "C" {

void fake_gpu_kernel_counters(float tensor_pct, float dram_pct) {
  Pm& p = P();
  std::lock_guard lock(p.mu);
  p.tensor = tensor_pct;
  p.dram = dram_pct;
}

CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext, uint32_t* device) {
  if (device == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *device = kDeviceId;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params* p) {
  return p == nullptr ? CUPTI_ERROR_INVALID_PARAMETER : CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params* p) {
  if (p == nullptr || p->deviceIndex != kDeviceId) return CUPTI_ERROR_INVALID_DEVICE;
  p->pChipName = kChip;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingGetCounterAvailability(
    CUpti_PmSampling_GetCounterAvailability_Params* p) {
  if (p == nullptr || p->deviceIndex != kDeviceId) return CUPTI_ERROR_INVALID_DEVICE;
  if (p->pCounterAvailabilityImage == nullptr) {
    p->counterAvailabilityImageSize = 64;
  } else {
    std::memset(p->pCounterAvailabilityImage, 0, p->counterAvailabilityImageSize);
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params* p) {
  if (p == nullptr || p->profilerType != CUPTI_PROFILER_TYPE_PM_SAMPLING || p->pChipName == nullptr ||
      std::strcmp(p->pChipName, kChip) != 0) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  p->pHostObject = reinterpret_cast<CUpti_Profiler_Host_Object*>(new HostObject());
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) {
  if (p == nullptr || p->pHostObject == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  delete reinterpret_cast<HostObject*>(p->pHostObject);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) {
  if (p == nullptr || p->pHostObject == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  auto* host = reinterpret_cast<HostObject*>(p->pHostObject);
  // FAKE_PM_UNKNOWN_METRIC names one metric this "chip" lacks (a near miss of the real chips).
  const char* unknown = std::getenv("FAKE_PM_UNKNOWN_METRIC");
  for (size_t i = 0; i < p->numMetrics; ++i) {
    Field f;
    if (!Known(p->ppMetricNames[i], &f) ||
        (unknown != nullptr && std::strcmp(unknown, p->ppMetricNames[i]) == 0)) {
      return CUPTI_ERROR_INVALID_METRIC_NAME;
    }
    host->fields.push_back(f);
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
  if (p == nullptr || p->pHostObject == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  p->configImageSize = 16 + reinterpret_cast<HostObject*>(p->pHostObject)->fields.size();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) {
  if (p == nullptr || p->pHostObject == nullptr || p->pConfigImage == nullptr) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  const auto* host = reinterpret_cast<HostObject*>(p->pHostObject);
  if (p->configImageSize < 16 + host->fields.size()) return CUPTI_ERROR_INVALID_PARAMETER;
  std::memset(p->pConfigImage, 0, p->configImageSize);
  p->pConfigImage[0] = static_cast<uint8_t>(host->fields.size());
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
  if (p == nullptr || p->pConfigImage == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  // FAKE_PM_MAX_METRICS_PER_PASS: more metrics than this need a second pass.
  const char* max = std::getenv("FAKE_PM_MAX_METRICS_PER_PASS");
  const size_t per_pass = max != nullptr ? std::strtoul(max, nullptr, 10) : 4;
  const size_t n = p->pConfigImage[0];
  p->numOfPasses = per_pass == 0 ? 2 : (n + per_pass - 1) / per_pass;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostEvaluateToGpuValues(
    CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  if (p == nullptr || p->pCounterDataImage == nullptr || p->pMetricValues == nullptr) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  ImageHeader h;
  std::memcpy(&h, p->pCounterDataImage, sizeof(h));
  if (p->rangeIndex >= h.count) return CUPTI_ERROR_INVALID_PARAMETER;
  Sample s;
  std::memcpy(&s, p->pCounterDataImage + sizeof(h) + p->rangeIndex * sizeof(Sample), sizeof(s));
  for (size_t i = 0; i < p->numMetrics; ++i) {
    Field f;
    if (!Known(p->ppMetricNames[i], &f)) return CUPTI_ERROR_INVALID_METRIC_NAME;
    p->pMetricValues[i] = s.values[f];
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingEnable(CUpti_PmSampling_Enable_Params* p) {
  if (p == nullptr || p->deviceIndex != kDeviceId) return CUPTI_ERROR_INVALID_DEVICE;
  // FAKE_PM_DENIED: the driver restricts the counters to admin users (NVreg_RestrictProfilingToAdminUsers).
  if (std::getenv("FAKE_PM_DENIED") != nullptr) return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  Pm& pm = P();
  std::lock_guard lock(pm.mu);
  if (pm.enabled_objects > 0) return CUPTI_ERROR_INVALID_OPERATION;
  ++pm.enabled_objects;
  p->pPmSamplingObject = kObject;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingDisable(CUpti_PmSampling_Disable_Params* p) {
  if (p == nullptr || p->pPmSamplingObject != kObject) return CUPTI_ERROR_INVALID_PARAMETER;
  Pm& pm = P();
  std::lock_guard lock(pm.mu);
  pm.enabled_objects = 0;
  pm.running = false;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params* p) {
  if (p == nullptr || p->pPmSamplingObject != kObject || p->pConfig == nullptr ||
      p->samplingInterval == 0 || p->hardwareBufferSize == 0) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Pm& pm = P();
  std::lock_guard lock(pm.mu);
  pm.interval_ns = p->samplingInterval;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params* p) {
  if (p == nullptr || p->pPmSamplingObject != kObject || p->maxSamples == 0) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  p->counterDataSize = sizeof(ImageHeader) + size_t{p->maxSamples} * sizeof(Sample);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingCounterDataImageInitialize(
    CUpti_PmSampling_CounterDataImage_Initialize_Params* p) {
  if (p == nullptr || p->pCounterData == nullptr || p->counterDataSize < sizeof(ImageHeader)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  std::memset(p->pCounterData, 0, p->counterDataSize);
  const ImageHeader h{static_cast<uint32_t>((p->counterDataSize - sizeof(ImageHeader)) / sizeof(Sample)), 0};
  std::memcpy(p->pCounterData, &h, sizeof(h));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingStart(CUpti_PmSampling_Start_Params* p) {
  if (p == nullptr || p->pPmSamplingObject != kObject) return CUPTI_ERROR_INVALID_PARAMETER;
  Pm& pm = P();
  std::lock_guard lock(pm.mu);
  if (pm.running) return CUPTI_ERROR_INVALID_OPERATION;
  pm.running = true;
  pm.next_sample = Now();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingStop(CUpti_PmSampling_Stop_Params* p) {
  if (p == nullptr || p->pPmSamplingObject != kObject) return CUPTI_ERROR_INVALID_PARAMETER;
  Pm& pm = P();
  std::lock_guard lock(pm.mu);
  pm.running = false;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params* p) {
  if (p == nullptr || p->pPmSamplingObject != kObject || p->pCounterDataImage == nullptr) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  Pm& pm = P();
  std::lock_guard lock(pm.mu);
  ImageHeader h;
  std::memcpy(&h, p->pCounterDataImage, sizeof(h));
  const uint64_t now = Now();
  p->decodeStopReason = CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
  p->overflow = 0;
  while (pm.next_sample + pm.interval_ns <= now) {
    if (h.count >= h.capacity) {
      p->decodeStopReason = CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
      break;
    }
    const Sample s = Measure(pm.next_sample, pm.next_sample + pm.interval_ns, pm.spans);
    std::memcpy(p->pCounterDataImage + sizeof(h) + size_t{h.count} * sizeof(Sample), &s, sizeof(s));
    ++h.count;
    pm.next_sample += pm.interval_ns;
  }
  while (!pm.spans.empty() && pm.spans.front().end <= pm.next_sample) pm.spans.pop_front();
  std::memcpy(p->pCounterDataImage, &h, sizeof(h));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params* p) {
  if (p == nullptr || p->pCounterDataImage == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  ImageHeader h;
  std::memcpy(&h, p->pCounterDataImage, sizeof(h));
  p->numTotalSamples = h.capacity;
  p->numPopulatedSamples = h.count;
  p->numCompletedSamples = h.count;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingCounterDataGetSampleInfo(
    CUpti_PmSampling_CounterData_GetSampleInfo_Params* p) {
  if (p == nullptr || p->pCounterDataImage == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  ImageHeader h;
  std::memcpy(&h, p->pCounterDataImage, sizeof(h));
  if (p->sampleIndex >= h.count) return CUPTI_ERROR_INVALID_PARAMETER;
  Sample s;
  std::memcpy(&s, p->pCounterDataImage + sizeof(h) + p->sampleIndex * sizeof(Sample), sizeof(s));
  p->startTimestamp = s.start;
  p->endTimestamp = s.end;
  return CUPTI_SUCCESS;
}

}  // extern "C"
