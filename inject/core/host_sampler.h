// Where the host is while it leaves the GPU waiting: the Python line the main thread runs,
// sampled during host gaps (the main thread outside our CUDA calls for kMinSampledGapNs or
// more). host_bound then names the hottest lines inside its gaps, the part of "where in my
// code" that the CUDA calls around a gap cannot give (what ran between them).
//
// gpuspy's threads never take the GIL (injection-design.md): the sampler thread only decides
// when, and asks CPython to run the capture on its main thread with Py_AddPendingCall, which
// needs no GIL and runs the call at the interpreter's next eval-breaker check, with the GIL
// held, on the thread being sampled. CPython 3.12+ checks it at once; 3.9-3.11 only notice a
// pending call when the main thread next takes the GIL (every PyTorch op, I/O, sleep or another
// thread's turn releases it), so a pure-Python stretch that never lets go of the GIL is seen
// late: a sample that ran more than kMaxSampleDelayNs after it was asked for is dropped, not
// pinned on whatever line came next.
//
// Cost (bench/results/host-sampler-2026-11-27.md): the main thread pays one capture per sample,
// only in host gaps (1-5 us with the pending call's hand-over: at 200 Hz, <= 0.1% of the host
// time in gaps); the sampler thread pays a wake-up per tick, `hz` a second while the process
// has host gaps, kQuietHz otherwise.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "inject/core/call_site_queue.h"
#include "inject/core/call_sites.h"

namespace gpuspy::inject {

inline constexpr uint32_t kDefaultHostSampleHz = 200;
inline constexpr uint32_t kMaxHostSampleHz = 2000;
// A shorter stretch outside CUDA calls is launch overhead, not a host gap worth naming.
inline constexpr uint64_t kMinSampledGapNs = 200'000;
// Past this, the host is not in a step's gap but done with the GPU (evaluation on the CPU,
// checkpointing, the end of the job): sampling waits for the next CUDA call.
inline constexpr uint64_t kMaxSampledGapNs = 10'000'000'000;
// A pending call that ran later than this after it was asked for is not a sample of the gap.
inline constexpr uint64_t kMinSampleDelayBoundNs = 10'000'000;
// A wake-up costs the sampler thread 2-50 us of CPU (a timer and a futex; 50 on a VM), so after
// this long without a host gap (a GPU-bound loop, a process between phases) it looks only
// kQuietHz times a second until it sees one again. A host-bound loop has a gap every step and
// keeps the full rate; the cost of a slow look is a late first sample of a new pattern.
inline constexpr uint64_t kQuietAfterNs = 1'000'000'000;
inline constexpr uint32_t kQuietHz = 20;

struct HostSamplerCounters {
  std::atomic<uint64_t> ticks{0};      // sampler wake-ups
  std::atomic<uint64_t> requested{0};  // pending calls queued in CPython
  std::atomic<uint64_t> refused{0};    // CPython would not queue one (full, finalising)
  std::atomic<uint64_t> samples{0};    // Python lines captured
  std::atomic<uint64_t> late{0};       // ran too long after being asked for: dropped
  std::atomic<uint64_t> no_frame{0};   // ran with no Python frame to name
  std::atomic<uint64_t> capture_ns{0}; // main-thread time inside the pending calls
};

class HostSampler {
 public:
  // `now_ns` is the event clock (CUPTI's timestamp): samples are placed on the same timeline as
  // the API records. `sites` gives the main thread's CUDA-call state and the site registry.
  HostSampler(uint32_t hz, CallSites* sites, std::function<int64_t()> now_ns);
  ~HostSampler();
  HostSampler(const HostSampler&) = delete;
  HostSampler& operator=(const HostSampler&) = delete;

  // Starts the sampler thread; false (and nothing started) when `hz` is 0 or this process has
  // no CPython to sample.
  bool Start();
  // Stops the thread; a capture already queued in CPython does nothing when it runs (it finds no
  // sampler, or another process: a fork()ed child's copy never samples). Idempotent.
  void Stop();
  bool running() const { return running_.load(); }

  // (event-clock timestamp, site id) of each sample, for the pipeline thread to drain.
  CallSiteQueue* samples() { return &samples_; }
  // The OS thread id of the thread the samples are of (CPython's main thread; 0 before the first).
  uint32_t thread_id() const { return thread_id_.load(std::memory_order_relaxed); }
  const HostSamplerCounters& counters() const { return counters_; }
  uint32_t hz() const { return hz_; }

  // One decision of the sampler thread, exposed for tests: asks for a sample when the main
  // thread has been outside CUDA calls for a host gap at `now_mono_ns`. True when one was queued.
  bool Tick(uint64_t now_mono_ns);

 private:
  void Run();
  // The pending call, on CPython's main thread. Finds the sampler through a global rather than
  // its argument: one queued before Stop may run after the sampler is gone (in production it
  // never is: the core leaks it, like the call sites).
  static int Capture(void* unused);

  const uint32_t hz_;
  const uint64_t max_delay_ns_;
  CallSites* sites_;
  std::function<int64_t()> now_ns_;
  CallSiteQueue samples_{12};  // 4096 samples: the pipeline drains it every flush period
  const int owner_pid_;
  std::atomic<bool> in_flight_{false};     // a capture is queued in CPython and has not run
  std::atomic<uint64_t> asked_at_ns_{0};   // monotonic time it was queued
  std::atomic<uint64_t> gap_seen_ns_{0};   // the last tick that found the main thread in a gap
  std::atomic<uint32_t> thread_id_{0};
  std::atomic<bool> running_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
  HostSamplerCounters counters_;
};

}  // namespace gpuspy::inject
