// Which CUDA calls get a call site, and when: every blocking call (syncs, copies that may wait
// on the host, implicit syncs like cudaFree), launches sampled 1 in N, and the launch that ends
// a host gap: the first launch at least the gap threshold after the thread's previous CUDA call
// began (host time, plus that call's own few microseconds). That line is where the host came
// back to the GPU after a host-bound stretch (host_bound names it); gaps are rare by
// definition, so capturing them costs at most one capture per threshold of host time (0.25% of
// a core at 200 us and ~0.5 us a capture). Called from CUPTI's API callbacks on application
// threads; the CUPTI side (which cbid is which) stays in cupti_capture.cc.
#pragma once

#include <atomic>
#include <cstdint>

#include "inject/core/call_site_queue.h"
#include "inject/core/call_site_registry.h"

namespace gpuspy::inject {

enum class CallSiteKind : uint8_t { kNone = 0, kBlocking = 1, kLaunch = 2 };

// Adaptive launch sampling: the period N is the measured cost of one capture divided by this
// budget per launch, so sampling adds about this much to an average launch whatever a capture
// costs (a cached Python site ~0.2-0.5 us, a native one more). A CUDA launch with CUPTI tracing
// costs 2-5 us, so 25 ns is ~1%.
inline constexpr uint64_t kLaunchBudgetNs = 25;
inline constexpr uint32_t kMinAutoPeriod = 16;
inline constexpr uint32_t kMaxAutoPeriod = 1u << 16;
inline constexpr uint32_t kInitialAutoPeriod = 64;
inline constexpr uint32_t kDefaultGapCaptureUs = 200;

struct CallSiteConfig {
  bool enabled = true;        // GPUSPY_CALLSITES=0 turns call sites off (no API callbacks)
  // GPUSPY_CALLSITE_LAUNCHES: 1 in N launches; 0 = launches never; auto (the default) = adaptive.
  bool launch_auto = true;
  uint32_t launch_period = 0;
  // GPUSPY_CALLSITE_GAP_US: a launch this long after the thread's previous CUDA call began gets
  // its site (0 = never). Off with launches (GPUSPY_CALLSITE_LAUNCHES=0).
  uint32_t gap_us = kDefaultGapCaptureUs;
  CallSiteOptions frames;
};

struct CallSiteCounters {
  std::atomic<uint64_t> blocking{0};         // blocking calls seen
  std::atomic<uint64_t> launches{0};         // launches seen
  std::atomic<uint64_t> launches_sampled{0}; // launches whose site was captured (1 in N)
  std::atomic<uint64_t> gap_enders{0};       // launches captured for ending a host gap
  std::atomic<uint64_t> nested{0};           // inner calls that reused their outer call's site
  std::atomic<uint64_t> capture_ns{0};       // total time spent capturing sampled launch sites
};

class CallSites {
 public:
  explicit CallSites(CallSiteConfig config);
  CallSites(const CallSites&) = delete;
  CallSites& operator=(const CallSites&) = delete;

  // The ENTER and EXIT of a CUDA call of `kind` (kNone: not one of ours). A call made inside
  // another one on the same thread (the runtime's cudaMemcpy calling cuMemcpyDtoH) gets its outer
  // call's site without walking again.
  void OnEnter(CallSiteKind kind, uint64_t correlation_id);
  void OnExit(CallSiteKind kind);

  // The process's main thread (where CPython runs its main interpreter) as the host sampler
  // sees it (host_sampler.h): inside one of our CUDA calls or not, and when it last entered one
  // (monotonic ns, after our own capture; 0: none since watching began).
  struct MainThread {
    bool in_call = false;
    uint64_t last_enter_ns = 0;
  };
  MainThread main_thread() const {
    return {main_in_call_.load(std::memory_order_relaxed),
            main_last_enter_ns_.load(std::memory_order_relaxed)};
  }
  // On while our callbacks are (CuptiCapture switches both): off, main_thread() reads as "no
  // call yet", so nothing samples a process that is not being traced.
  void SetWatching(bool on);

  // The current 1-in-N launch period (0: launches off).
  uint32_t launch_period() const { return launch_period_.load(std::memory_order_relaxed); }
  const CallSiteConfig& config() const { return config_; }
  CallSiteRegistry* registry() { return &registry_; }
  CallSiteQueue* queue() { return &queue_; }
  const CallSiteCounters& counters() const { return counters_; }

 private:
  uint32_t CaptureLaunch(bool after_gap);
  void Adapt(uint64_t cost_ns);

  const CallSiteConfig config_;
  CallSiteRegistry registry_;
  CallSiteQueue queue_;
  std::atomic<uint32_t> launch_period_;
  const uint64_t gap_ns_;  // 0: no gap-ender captures
  std::atomic<uint64_t> cost_ewma_ns_{0};  // of one sampled launch capture
  std::atomic<bool> watching_{false};
  std::atomic<bool> main_in_call_{false};
  std::atomic<uint64_t> main_last_enter_ns_{0};
  CallSiteCounters counters_;
};

}  // namespace gpuspy::inject
