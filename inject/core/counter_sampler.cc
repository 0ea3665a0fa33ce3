#include "inject/core/counter_sampler.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "client/log/log_line.h"

namespace gpuspy::inject {
namespace {

// The hardware buffer each device's monitor writes raw samples into, between decodes. At the
// default 1 ms interval a flush period's samples take a few hundred KiB: this leaves minutes of
// headroom for a pipeline thread that falls behind.
constexpr size_t kHardwareBufferBytes = 64ull << 20;
// Samples the decoded image holds: two seconds of them (a decode per flush period, 100 ms by
// default, empties it), within bounds.
constexpr uint32_t kImageSeconds = 2;
constexpr uint32_t kMinImageSamples = 64;
constexpr uint32_t kMaxImageSamples = 200'000;
// Decodes per Poll when the image fills before the hardware buffer is empty.
constexpr int kMaxDecodesPerPoll = 8;

template <typename P>
P Params(size_t size) {
  P p;
  std::memset(&p, 0, sizeof(p));
  p.structSize = size;
  return p;
}
#define GPUSPY_PARAMS(T) Params<T>(T##_STRUCT_SIZE)

std::string Why(CUptiResult r, const char* what) {
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    return absl::StrCat(what, ": the GPU's performance counters are restricted to admin users "
                              "(see https://developer.nvidia.com/ERR_NVGPUCTRPERM)");
  }
  if (r == CUPTI_ERROR_NOT_SUPPORTED) return absl::StrCat(what, ": not supported on this GPU");
  return absl::StrCat(what, " failed: CUPTI error ", static_cast<int>(r));
}

float Percent(double v) {
  if (!std::isfinite(v)) return -1.0f;
  return static_cast<float>(std::max(0.0, v));
}

}  // namespace

struct CounterSampler::Device {
  uint32_t id = 0;
  bool refused = false;
  bool running = false;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_PmSampling_Object* object = nullptr;
  std::vector<const char*> metrics;  // configured, in kCounterMetrics' order
  std::vector<size_t> fields;        // each configured metric's index in kCounterMetrics
  std::vector<uint8_t> image;        // the decoded samples
  std::vector<uint8_t> blank;        // the image as initialised: restored after each decode
  bool overflow_said = false;
};

CounterSampler::CounterSampler(const CuptiApi::PmSampling* api, CounterConfig config,
                               std::function<int64_t()> now_ns)
    : api_(api), config_(config), now_ns_(std::move(now_ns)) {}

CounterSampler::~CounterSampler() {
  std::vector<CounterSampleEvent> dropped;
  StopAll(&dropped);
  for (auto& [id, d] : devices_) {
    if (d->host == nullptr) continue;
    auto p = GPUSPY_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    p.pHostObject = d->host;
    (void)api_->HostDeinitialize(&p);
  }
}

void CounterSampler::Watch(uint32_t device) {
  std::lock_guard lock(mu_);
  auto [it, fresh] = devices_.try_emplace(device);
  if (!fresh) {
    Device& d = *it->second;
    // Sampling stopped by a detach: a new session starts it again.
    if (!d.refused && !d.running && d.object != nullptr) {
      auto start = GPUSPY_PARAMS(CUpti_PmSampling_Start_Params);
      start.pPmSamplingObject = d.object;
      d.running = api_->Start(&start) == CUPTI_SUCCESS;
    }
    return;
  }
  it->second = std::make_unique<Device>();
  Device& d = *it->second;
  d.id = device;
  auto refuse = [&](std::string why) {
    d.refused = true;
    last_refusal_ = absl::StrCat("device ", device, ": ", why);
    Log(LogLevel::kWarn, "hardware counters off on %s; tracing goes on without them",
        last_refusal_.c_str());
  };
  if (api_ == nullptr || !api_->complete()) {
    refuse("this CUPTI has no PM sampling (CUDA 12.6 or newer has)");
    return;
  }
  if (!profiler_initialized_) {
    auto init = GPUSPY_PARAMS(CUpti_Profiler_Initialize_Params);
    if (CUptiResult r = api_->ProfilerInitialize(&init); r != CUPTI_SUCCESS) {
      refuse(Why(r, "cuptiProfilerInitialize"));
      return;
    }
    profiler_initialized_ = true;
  }
  auto chip = GPUSPY_PARAMS(CUpti_Device_GetChipName_Params);
  chip.deviceIndex = device;
  if (CUptiResult r = api_->DeviceGetChipName(&chip); r != CUPTI_SUCCESS || chip.pChipName == nullptr) {
    refuse(Why(r, "cuptiDeviceGetChipName"));
    return;
  }
  const std::string chip_name = chip.pChipName;
  auto avail = GPUSPY_PARAMS(CUpti_PmSampling_GetCounterAvailability_Params);
  avail.deviceIndex = device;
  if (CUptiResult r = api_->GetCounterAvailability(&avail); r != CUPTI_SUCCESS) {
    refuse(Why(r, "cuptiPmSamplingGetCounterAvailability"));
    return;
  }
  std::vector<uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  if (CUptiResult r = api_->GetCounterAvailability(&avail); r != CUPTI_SUCCESS) {
    refuse(Why(r, "cuptiPmSamplingGetCounterAvailability"));
    return;
  }

  // A host object configured with `metrics`; its config image when they fit one pass.
  auto configure = [&](const std::vector<const char*>& metrics, std::vector<uint8_t>* config) {
    auto deinit = [&](CUpti_Profiler_Host_Object* host) {
      auto p = GPUSPY_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
      p.pHostObject = host;
      (void)api_->HostDeinitialize(&p);
    };
    auto init = GPUSPY_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    init.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
    init.pChipName = chip_name.c_str();
    init.pCounterAvailabilityImage = availability.data();
    if (api_->HostInitialize(&init) != CUPTI_SUCCESS || init.pHostObject == nullptr) {
      return static_cast<CUpti_Profiler_Host_Object*>(nullptr);
    }
    auto add = GPUSPY_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    add.pHostObject = init.pHostObject;
    add.ppMetricNames = const_cast<const char**>(metrics.data());
    add.numMetrics = metrics.size();
    auto size = GPUSPY_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    size.pHostObject = init.pHostObject;
    if (api_->HostConfigAddMetrics(&add) != CUPTI_SUCCESS ||
        api_->HostGetConfigImageSize(&size) != CUPTI_SUCCESS || size.configImageSize == 0) {
      deinit(init.pHostObject);
      return static_cast<CUpti_Profiler_Host_Object*>(nullptr);
    }
    config->assign(size.configImageSize, 0);
    auto image = GPUSPY_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
    image.pHostObject = init.pHostObject;
    image.configImageSize = config->size();
    image.pConfigImage = config->data();
    auto passes = GPUSPY_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
    passes.configImageSize = config->size();
    passes.pConfigImage = config->data();
    if (api_->HostGetConfigImage(&image) != CUPTI_SUCCESS ||
        api_->HostGetNumOfPasses(&passes) != CUPTI_SUCCESS || passes.numOfPasses != 1) {
      deinit(init.pHostObject);
      return static_cast<CUpti_Profiler_Host_Object*>(nullptr);
    }
    return init.pHostObject;
  };
  // The metrics this chip knows, each alone; then the longest prefix of them that fits one pass
  // (sampling cannot replay: a second pass would need a second run).
  std::vector<uint8_t> config;
  for (size_t i = 0; i < kCounterMetricCount; ++i) {
    if (CUpti_Profiler_Host_Object* h = configure({kCounterMetrics[i]}, &config); h != nullptr) {
      auto p = GPUSPY_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
      p.pHostObject = h;
      (void)api_->HostDeinitialize(&p);
      d.metrics.push_back(kCounterMetrics[i]);
      d.fields.push_back(i);
    }
  }
  while (!d.metrics.empty() && (d.host = configure(d.metrics, &config)) == nullptr) {
    d.metrics.pop_back();
    d.fields.pop_back();
  }
  if (d.host == nullptr) {
    refuse(absl::StrCat("chip ", chip_name, " samples none of gpuspy's counters"));
    return;
  }
  auto enable = GPUSPY_PARAMS(CUpti_PmSampling_Enable_Params);
  enable.deviceIndex = device;
  if (CUptiResult r = api_->Enable(&enable); r != CUPTI_SUCCESS || enable.pPmSamplingObject == nullptr) {
    refuse(Why(r, "cuptiPmSamplingEnable"));
    return;
  }
  d.object = enable.pPmSamplingObject;
  const uint32_t samples = std::clamp<uint32_t>(kImageSeconds * 1'000'000 / config_.interval_us,
                                                kMinImageSamples, kMaxImageSamples);
  auto data_size = GPUSPY_PARAMS(CUpti_PmSampling_GetCounterDataSize_Params);
  data_size.pPmSamplingObject = d.object;
  data_size.pMetricNames = d.metrics.data();
  data_size.numMetrics = d.metrics.size();
  data_size.maxSamples = samples;
  if (CUptiResult r = api_->GetCounterDataSize(&data_size); r != CUPTI_SUCCESS) {
    refuse(Why(r, "cuptiPmSamplingGetCounterDataSize"));
    return;
  }
  d.image.assign(data_size.counterDataSize, 0);
  auto init_image = GPUSPY_PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params);
  init_image.pPmSamplingObject = d.object;
  init_image.counterDataSize = d.image.size();
  init_image.pCounterData = d.image.data();
  if (CUptiResult r = api_->CounterDataImageInitialize(&init_image); r != CUPTI_SUCCESS) {
    refuse(Why(r, "cuptiPmSamplingCounterDataImageInitialize"));
    return;
  }
  d.blank = d.image;
  auto set = GPUSPY_PARAMS(CUpti_PmSampling_SetConfig_Params);
  set.pPmSamplingObject = d.object;
  set.configSize = config.size();
  set.pConfig = config.data();
  set.hardwareBufferSize = kHardwareBufferBytes;
  set.samplingInterval = uint64_t{config_.interval_us} * 1000;
  set.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  set.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  if (api_->SetConfig(&set) != CUPTI_SUCCESS) {
    // Turing and GA100 have no time trigger: their interval counts SYSCLK cycles (~1 GHz on
    // datacenter parts; the samples carry their own timestamps, so the analysis is unaffected).
    set.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_SYSCLK_INTERVAL;
    if (CUptiResult r = api_->SetConfig(&set); r != CUPTI_SUCCESS) {
      refuse(Why(r, "cuptiPmSamplingSetConfig"));
      return;
    }
  }
  auto start = GPUSPY_PARAMS(CUpti_PmSampling_Start_Params);
  start.pPmSamplingObject = d.object;
  if (CUptiResult r = api_->Start(&start); r != CUPTI_SUCCESS) {
    refuse(Why(r, "cuptiPmSamplingStart"));
    return;
  }
  d.running = true;
  Log(LogLevel::kInfo, "hardware counters on device %u (%s): %zu of %zu metrics every %u us",
      device, chip_name.c_str(), d.metrics.size(), kCounterMetricCount, config_.interval_us);
}

void CounterSampler::DecodeLocked(Device& d, std::vector<CounterSampleEvent>* out) {
  if (!d.running) return;
  const size_t first = out->size();
  for (int round = 0; round < kMaxDecodesPerPoll; ++round) {
    auto decode = GPUSPY_PARAMS(CUpti_PmSampling_DecodeData_Params);
    decode.pPmSamplingObject = d.object;
    decode.pCounterDataImage = d.image.data();
    decode.counterDataImageSize = d.image.size();
    const CUptiResult r = api_->DecodeData(&decode);
    if ((r != CUPTI_SUCCESS || decode.overflow != 0) && !d.overflow_said) {
      d.overflow_said = true;
      Log(LogLevel::kWarn, "hardware counters on device %u: %s; some samples are lost", d.id,
          r != CUPTI_SUCCESS ? Why(r, "cuptiPmSamplingDecodeData").c_str()
                             : "the hardware buffer overflowed (raise GPUSPY_COUNTER_INTERVAL_US)");
    }
    if (r != CUPTI_SUCCESS) break;
    auto info = GPUSPY_PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params);
    info.pCounterDataImage = d.image.data();
    info.counterDataImageSize = d.image.size();
    if (api_->GetCounterDataInfo(&info) != CUPTI_SUCCESS) break;
    std::vector<double> values(d.metrics.size());
    for (size_t i = 0; i < info.numCompletedSamples; ++i) {
      auto sample = GPUSPY_PARAMS(CUpti_PmSampling_CounterData_GetSampleInfo_Params);
      sample.pPmSamplingObject = d.object;
      sample.pCounterDataImage = d.image.data();
      sample.counterDataImageSize = d.image.size();
      sample.sampleIndex = i;
      auto eval = GPUSPY_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
      eval.pHostObject = d.host;
      eval.pCounterDataImage = d.image.data();
      eval.counterDataImageSize = d.image.size();
      eval.rangeIndex = i;
      eval.ppMetricNames = d.metrics.data();
      eval.numMetrics = d.metrics.size();
      eval.pMetricValues = values.data();
      if (api_->GetSampleInfo(&sample) != CUPTI_SUCCESS ||
          api_->HostEvaluateToGpuValues(&eval) != CUPTI_SUCCESS ||
          sample.endTimestamp <= sample.startTimestamp) {
        continue;
      }
      CounterSampleEvent e;
      e.start_ns = static_cast<int64_t>(sample.startTimestamp);
      e.end_ns = static_cast<int64_t>(sample.endTimestamp);
      e.device_id = d.id;
      float* fields[] = {&e.tensor_active_pct, &e.dram_throughput_pct, &e.sm_active_pct,
                         &e.gpu_active_pct};
      for (size_t m = 0; m < d.fields.size(); ++m) *fields[d.fields[m]] = Percent(values[m]);
      out->push_back(e);
    }
    std::copy(d.blank.begin(), d.blank.end(), d.image.begin());
    if (decode.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) break;
  }
  if (out->size() == first) return;
  if (!clock_checked_) {
    // Samples carry the GPU's timestamps; activity records carry CUPTI's. They are one clock on
    // the GPUs checked so far; if not, the newest sample ended at most a flush period ago.
    clock_checked_ = true;
    const int64_t gap = now_ns_() - out->back().end_ns;
    if (gap > kMaxClockMismatchNs || gap < -kMaxClockMismatchNs) {
      clock_offset_ns_ = gap;
      Log(LogLevel::kWarn,
          "hardware counter timestamps are %lld ns off CUPTI's clock; shifted onto it (to within "
          "a flush period)",
          static_cast<long long>(gap));
    }
  }
  for (size_t i = first; i < out->size(); ++i) {
    (*out)[i].start_ns += clock_offset_ns_;
    (*out)[i].end_ns += clock_offset_ns_;
  }
}

void CounterSampler::StopLocked(Device& d, std::vector<CounterSampleEvent>* out) {
  if (!d.running) return;
  DecodeLocked(d, out);
  auto stop = GPUSPY_PARAMS(CUpti_PmSampling_Stop_Params);
  stop.pPmSamplingObject = d.object;
  (void)api_->Stop(&stop);
  // Not cuptiPmSamplingDisable: in CUDA 12.6-13.0 disabling the last PM sampling object tears
  // down CUPTI's profiler state with it (XLA's sampler avoids it for the same reason); the object
  // lives as long as the process, and a later session starts it again.
  d.running = false;
}

void CounterSampler::NoteContextCreated(uint32_t device) {
  if (device < 64) noted_.fetch_or(uint64_t{1} << device, std::memory_order_relaxed);
}

void CounterSampler::StartNoted() {
  uint64_t noted = noted_.exchange(0, std::memory_order_relaxed);
  for (uint32_t d = 0; noted != 0; ++d, noted >>= 1) {
    if ((noted & 1) != 0) Watch(d);
  }
}

void CounterSampler::Poll(std::vector<CounterSampleEvent>* out) {
  StartNoted();
  std::lock_guard lock(mu_);
  out->insert(out->end(), left_.begin(), left_.end());
  left_.clear();
  for (auto& [id, d] : devices_) DecodeLocked(*d, out);
}

void CounterSampler::OnContextDestroying(uint32_t device) {
  // Inside CUPTI's callback: waiting for a Poll that is itself inside CUPTI could deadlock. A
  // Poll in progress is decoding this device anyway.
  std::unique_lock lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  if (auto it = devices_.find(device); it != devices_.end()) StopLocked(*it->second, &left_);
}

void CounterSampler::StopAll(std::vector<CounterSampleEvent>* out) {
  std::lock_guard lock(mu_);
  out->insert(out->end(), left_.begin(), left_.end());
  left_.clear();
  for (auto& [id, d] : devices_) StopLocked(*d, out);
}

size_t CounterSampler::sampled_devices() const {
  std::lock_guard lock(mu_);
  return static_cast<size_t>(std::count_if(devices_.begin(), devices_.end(),
                                           [](const auto& kv) { return kv.second->object != nullptr; }));
}

std::string CounterSampler::last_refusal() const {
  std::lock_guard lock(mu_);
  return last_refusal_;
}

}  // namespace gpuspy::inject
