// The CUPTI session: subscription, enabled activity kinds, buffer callbacks, flushing.
// Policy (what to enable, when to flush) comes from CoreConfig; CUPTI mechanics stay here.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "inject/core/buffer_pool.h"
#include "inject/core/call_sites.h"
#include "inject/core/counter_sampler.h"
#include "inject/core/core_config.h"
#include "inject/core/cupti_api.h"
#include "inject/core/event_pipeline.h"
#include "inject/core/record_parser.h"

namespace gpuspy::inject {

class CuptiCapture {
 public:
  // CUPTI's callbacks are plain function pointers: they reach the session through this.
  static CuptiCapture& Instance();

  // Loads CUPTI, subscribes (again after Stop) and (in continuous mode) enables the configured activity kinds; in
  // on-demand mode tracing stays off until EnableKinds. FailedPrecondition when
  // another profiler already holds CUPTI (torch.profiler, Nsight Systems): gpuspy then stays
  // inert and the application runs on untouched.
  absl::Status Start(const CoreConfig& config, const std::string& cupti_path);
  // Switches tracing on for `kinds` (an attach window opening). Kinds CUPTI refuses are logged.
  void EnableKinds(const CaptureKinds& kinds);
  // Disables activity collection (no new records); already buffered records stay flushable.
  void StopCollection();
  // Ends the session (gpuspy detach): collection off, buffers flushed, callbacks off, CUPTI
  // unsubscribed, so the application pays nothing until Start is called again.
  void Stop();
  // The CUPTI clock, which activity timestamps use.
  int64_t Now() const;

  // cuptiActivityFlushAll: completed buffers land in completed().
  void Flush(bool forced);
  uint64_t DroppedRecords() const { return dropped_records_.load(std::memory_order_relaxed); }

  // After fork(): the child has no CUPTI session of its own and no gpuspy threads; every
  // callback that still fires there must do nothing.
  void MarkInertAfterFork() { inert_.store(true); }

  const CuptiApi* api() const { return &api_; }
  // Parsers of this session's activity buffers for the pipeline, which sees RecordParser only.
  MakeRecordParser record_parser() const;
  // The call-site capture; nullptr when call sites are off (GPUSPY_CALLSITES=0).
  CallSites* call_sites() { return call_sites_; }
  // The hardware counters; nullptr unless GPUSPY_COUNTERS=1.
  CounterSampler* counters() { return counters_; }
  BufferPool* pool() { return pool_; }
  CompletedBuffers* completed() { return &completed_; }

 private:
  static void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI OnBufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                         size_t size, size_t valid_size);
  static void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain,
                                  CUpti_CallbackId cbid, const void* data);
  absl::Status Check(CUptiResult result, const char* what) const;
  // The device of a resource callback's context (cuptiGetDeviceId); false if CUPTI cannot say.
  bool ContextDevice(const void* resource_data, uint32_t* device) const;
  // Switches the API callbacks of the calls that get a call site (those of `kinds`' domains).
  void EnableCallSiteCallbacks(const CaptureKinds& kinds, bool enable);

  CuptiApi api_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  BufferPool* pool_ = nullptr;  // leaked on purpose: CUPTI may call back during exit
  CompletedBuffers completed_;
  std::atomic<uint64_t> dropped_records_{0};
  std::atomic<bool> inert_{false};
  std::atomic<bool> collecting_{false};
  std::mutex kinds_mu_;  // the sender thread switches kinds; the exit handler turns them off
  CaptureKinds kinds_;
  CallSites* call_sites_ = nullptr;  // leaked on purpose, like pool_
  CounterSampler* counters_ = nullptr;  // leaked on purpose, like pool_
  bool call_site_callbacks_ = false;  // under kinds_mu_
};

}  // namespace gpuspy::inject
