// The GPU's own counters for the injected library (GPUSPY_COUNTERS=1; off by default): CUPTI PM
// sampling of four device-wide metrics (CounterSampleEvent) on every device the process runs
// kernels on, so a live capture, which has no op shapes to count FLOPs from, still says how busy
// the tensor pipes and DRAM were in each step (docs/hardware-floor.md).
//
// PM sampling reads the performance monitors on a timer inside the GPU: kernels are neither
// replayed nor serialised (unlike the range profiler), so the program runs as it would. Its
// costs: a hardware buffer per device (kHardwareBufferBytes) and the decode, on the pipeline
// thread once per flush period (a few microseconds a sample). Measured on a GPU by
// tests/gpu/run.sh (the counters' overhead check).
//
// Threads: Poll runs on the gpuspy-send thread; OnContextDestroying on the application's thread
// inside CUPTI's resource callback. One mutex keeps them apart; neither is on a hot path.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "inject/core/cupti_api.h"
#include "model/events.h"

namespace gpuspy::inject {

// GPUSPY_COUNTERS, GPUSPY_COUNTER_INTERVAL_US.
struct CounterConfig {
  bool enabled = false;
  uint32_t interval_us = 1000;
};
inline constexpr uint32_t kMinCounterIntervalUs = 20;
inline constexpr uint32_t kMaxCounterIntervalUs = 1'000'000;

// The metrics, in CounterSampleEvent's order. Each is valid for PM sampling on Ampere (GA10x),
// Hopper and Blackwell chips (checked against the real libcupti's host API in
// tests/unit/counter_metrics_test.cc); a chip whose config needs more than one pass for all four
// keeps the longest prefix that fits one pass.
inline constexpr const char* kCounterMetrics[] = {
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
    "gr__cycles_active.avg.pct_of_peak_sustained_elapsed",
};
inline constexpr size_t kCounterMetricCount = 4;

class CounterSampler {
 public:
  // `api` must outlive the sampler; `now_ns` is the clock of activity records (CUPTI's), which
  // samples are checked against (kMaxClockMismatchNs).
  CounterSampler(const CuptiApi::PmSampling* api, CounterConfig config,
                 std::function<int64_t()> now_ns);
  ~CounterSampler();
  CounterSampler(const CounterSampler&) = delete;
  CounterSampler& operator=(const CounterSampler&) = delete;

  // Devices seen running kernels (the pipeline thread, from parsed kernel records): sampling
  // starts on each the first time. A device that cannot be sampled (no permission, an older chip,
  // another profiler holding its counters) is said once in the log and not tried again.
  void Watch(uint32_t device);
  // A context of `device` was created (CUPTI's resource callback, on the application's thread):
  // only remembered, so that no CUPTI call is made inside the callback; the pipeline thread's
  // next StartNoted (or Poll) starts the device. Devices of 64 and above are left to Watch.
  void NoteContextCreated(uint32_t device);
  // Watches every device noted since the last call (the pipeline thread, every loop).
  void StartNoted();
  // Decodes the samples completed since the last call, appending them to `out`.
  void Poll(std::vector<CounterSampleEvent>* out);
  // The context of `device` is going away (CUPTI's resource callback): decodes what is left into
  // the next Poll's output and stops the device's sampling, before its context disappears.
  void OnContextDestroying(uint32_t device);
  // Decodes what is left on every device into `out` and stops sampling (detach, exit).
  void StopAll(std::vector<CounterSampleEvent>* out);

  // Devices whose sampling started; why the last device that could not be sampled was refused
  // ("" none).
  size_t sampled_devices() const;
  std::string last_refusal() const;

  // The sampler's clock check: sample timestamps further than this from CUPTI's clock are taken
  // to be on another clock and shifted onto CUPTI's at the first decode (error: one flush period).
  static constexpr int64_t kMaxClockMismatchNs = 1'000'000'000;

 private:
  struct Device;
  void DecodeLocked(Device& d, std::vector<CounterSampleEvent>* out);
  void StopLocked(Device& d, std::vector<CounterSampleEvent>* out);

  const CuptiApi::PmSampling* api_;
  const CounterConfig config_;
  std::function<int64_t()> now_ns_;
  mutable std::mutex mu_;
  std::map<uint32_t, std::unique_ptr<Device>> devices_;  // started or refused, by device id
  std::vector<CounterSampleEvent> left_;  // decoded at a context's teardown, for the next Poll
  std::string last_refusal_;
  std::atomic<uint64_t> noted_{0};  // bit d: a context of device d was created
  bool profiler_initialized_ = false;
  bool clock_checked_ = false;
  int64_t clock_offset_ns_ = 0;
};

}  // namespace gpuspy::inject
