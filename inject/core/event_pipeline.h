// The core's data pump, on its own thread ("gpuspy-send"): completed CUPTI buffers -> parsed
// events -> compact batches -> collector (delivery.h), spilling to disk while the collector is
// away; the connection kept up (heartbeats, commands taken). On-demand capture windows are the
// capture controller's (capture_controller.h), which the pump feeds on the same thread.
// The application's threads only ever hand over buffer pointers (CompletedBuffers::Push).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "client/spill/batch_sink.h"
#include "client/spill/spill_adoption.h"
#include "codec/batch_encoder.h"
#include "inject/core/buffer_pool.h"
#include "inject/core/call_site_queue.h"
#include "inject/core/capture_controller.h"
#include "inject/core/core_config.h"
#include "inject/core/counter_sampler.h"
#include "inject/core/delivery.h"
#include "inject/core/host_sampler.h"
#include "inject/core/os_thread_names.h"
#include "inject/core/pipeline_stats.h"
#include "inject/core/record_parser.h"

namespace gpuspy::inject {

struct CompletedBuffer {
  uint8_t* data = nullptr;
  size_t valid_bytes = 0;
};

// Handed from CUPTI's buffer-completed callback to the pipeline thread.
class CompletedBuffers {
 public:
  void Push(CompletedBuffer buffer);
  // Waits up to `timeout` for at least one buffer; returns all queued.
  std::deque<CompletedBuffer> PopAll(std::chrono::milliseconds timeout);
  void Wake();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<CompletedBuffer> queue_;
  bool woken_ = false;
};

class EventPipeline {
 public:
  // `make_parser` gives the capture layer's record parser (CUPTI stays behind it); `flush` asks
  // CUPTI to complete its buffers (cuptiActivityFlushAll); `dropped_records` returns CUPTI's
  // cumulative drop count. Both are called on the pipeline thread. `tracing` goes to the capture
  // controller; without its clock, event times are taken to be CLOCK_REALTIME.
  EventPipeline(const CoreConfig& config, const MakeRecordParser& make_parser,
                v1::ProcessIdentity identity,
                std::unique_ptr<BatchSink> sink, BufferPool* pool, CompletedBuffers* completed,
                std::function<void(bool forced)> flush,
                std::function<uint64_t()> dropped_records, TracingControl tracing = {});
  ~EventPipeline();

  // Lets the pipeline deliver spill files that ended processes of this user left behind
  // (spill_adoption.h), each on a session of its own from `make_sink`. Call before Start; a no-op
  // when the configuration says not to (GPUSPY_ADOPT_SPILLS=0).
  void EnableSpillAdoption(std::function<std::unique_ptr<BatchSink>()> make_sink);
  // Gives parsed API events the call sites captured in CUPTI's callbacks (call_site_queue.h).
  // Call before Start; both must outlive the pipeline.
  void EnableCallSites(CallSiteQueue* queue, const CallSiteRegistry* registry);
  // Sends the host sampler's samples (host_sampler.h) as NVTX marks of kHostSampleDomain on
  // `thread_id()`'s lane, named by their call sites. After EnableCallSites (same registry); the
  // sampler must outlive the pipeline.
  void EnableHostSamples(HostSampler* sampler);
  // Samples the GPU's counters (counter_sampler.h) on every device that runs kernels, decoded
  // once per flush period and sent as CounterSampleEvents. Call before Start; the sampler must
  // outlive the pipeline.
  void EnableCounters(CounterSampler* counters);
  void Start();
  // Flushes, delivers what is pending (spilling what cannot be delivered within `timeout`), and
  // stops the thread. Safe to call more than once.
  void Stop(std::chrono::milliseconds timeout);

  const PipelineStats& stats() const { return stats_; }
  // Called in a fork()ed child, whose copy of the pipeline never runs: drops what would keep the
  // parent's spill file claimed after the parent ends.
  void AbandonAfterFork() { delivery_.AbandonAfterFork(); }

 private:
  void Run();
  void Drain(bool forced_flush);
  void ParseCompleted(std::chrono::milliseconds wait);
  // Parsed events -> what may be sent (all of them in continuous mode; the window's in dormant).
  void Route();
  // Stay registered (dormant processes, open windows), heartbeat, hand commands to the capture
  // controller.
  void Listen(std::chrono::steady_clock::time_point now);
  void CutBatch();
  LossCounters Loss() const;

  const CoreConfig config_;
  v1::ProcessIdentity identity_;
  BufferPool* pool_;
  CompletedBuffers* completed_;
  std::function<void(bool)> flush_;
  std::function<uint64_t()> dropped_records_;
  std::function<int64_t()> now_ns_;  // the clock of event times (TracingControl::now_ns)

  StringTable strings_;
  std::unique_ptr<RecordParser> parser_;
  BatchEncoder encoder_;
  OsThreadNames thread_names_{&strings_};  // sent with the threads' definitions
  EventColumns pending_;   // parsed, not yet routed
  EventColumns outgoing_;  // to be cut into batches
  std::chrono::steady_clock::time_point last_heartbeat_{};
  uint64_t next_sequence_ = 1;
  std::unique_ptr<BackgroundAdoption> adoption_;
  std::unique_ptr<CallSiteJoiner> call_sites_;
  HostSampler* host_sampler_ = nullptr;
  CounterSampler* counters_ = nullptr;
  uint64_t counter_devices_ = 0;  // bit d: device d handed to counters_->Watch
  StringRef host_sample_domain_ = 0;
  std::chrono::steady_clock::time_point next_adoption_{};
  size_t devices_reported_ = 0;

  PipelineStats stats_;
  CaptureController capture_;  // after strings_ and stats_, which it points at
  std::atomic<bool> stopping_{false};
  std::chrono::steady_clock::time_point exit_deadline_{};
  Delivery delivery_;  // after what it points at: identity_, stats_, stopping_, exit_deadline_
  std::thread thread_;
  std::mutex done_mu_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::once_flag stop_once_;
};

}  // namespace gpuspy::inject
