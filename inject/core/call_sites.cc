#include "inject/core/call_sites.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "inject/core/monotonic_ns.h"

namespace gpuspy::inject {
namespace {

// Per application thread. `depth` counts our calls open on this thread (ENTER seen, EXIT not).
struct ThreadState {
  uint32_t depth = 0;
  uint32_t outer_site = 0;
  uint32_t launch_countdown = 0;  // 0: the next launch is sampled (a thread's first one is)
  uint64_t last_enter_ns = 0;     // when this thread last entered a CUDA call of ours
  int8_t main = -1;               // the process's main thread? (-1: not asked yet)
  bool IsMain() {
    if (main < 0) main = syscall(SYS_gettid) == getpid() ? 1 : 0;
    return main == 1;
  }
};
thread_local ThreadState t_state;

}  // namespace

CallSites::CallSites(CallSiteConfig config)
    : config_(std::move(config)),
      registry_(config_.frames),
      launch_period_(config_.launch_auto ? kInitialAutoPeriod : config_.launch_period),
      gap_ns_(static_cast<uint64_t>(config_.gap_us) * 1000) {}

void CallSites::OnEnter(CallSiteKind kind, uint64_t correlation_id) {
  if (kind == CallSiteKind::kNone) return;
  ThreadState& t = t_state;
  if (t.depth++ > 0) {
    counters_.nested.fetch_add(1, std::memory_order_relaxed);
    if (t.outer_site != 0) (void)queue_.Push(correlation_id, t.outer_site);
    return;
  }
  // One clock read per outermost call (two when it captures): the gap since the last one's start
  // is host time plus that call's own (microseconds for a launch; a long sync makes the launch
  // after it count as a gap's end too, at most once per sync).
  const bool watch_main = watching_.load(std::memory_order_relaxed) && t.IsMain();
  const bool timed = gap_ns_ > 0 || watch_main;
  bool after_gap = false;
  if (timed) {
    const uint64_t now = MonotonicNs();
    after_gap = gap_ns_ > 0 && t.last_enter_ns > 0 && now - t.last_enter_ns >= gap_ns_;
    t.last_enter_ns = now;
  }
  if (watch_main) main_in_call_.store(true, std::memory_order_relaxed);
  uint32_t site = 0;
  if (kind == CallSiteKind::kBlocking) {
    counters_.blocking.fetch_add(1, std::memory_order_relaxed);
    site = registry_.Capture();
  } else {
    site = CaptureLaunch(after_gap);
  }
  // Our own capture is not host time: the next gap is measured from its end (else captures
  // slower than the threshold, under a sanitizer or a loaded machine, would make every launch a
  // gap's end, each capture causing the next).
  if (timed && (kind == CallSiteKind::kBlocking || site != 0)) t.last_enter_ns = MonotonicNs();
  if (watch_main) main_last_enter_ns_.store(t.last_enter_ns, std::memory_order_relaxed);
  t.outer_site = site;
  if (site != 0) (void)queue_.Push(correlation_id, site);
}

void CallSites::OnExit(CallSiteKind kind) {
  if (kind == CallSiteKind::kNone) return;
  ThreadState& t = t_state;
  if (t.depth > 0 && --t.depth == 0) {
    t.outer_site = 0;
    if (t.main == 1) main_in_call_.store(false, std::memory_order_relaxed);
  }
}

void CallSites::SetWatching(bool on) {
  watching_.store(on, std::memory_order_relaxed);
  if (!on) main_last_enter_ns_.store(0, std::memory_order_relaxed);
}

uint32_t CallSites::CaptureLaunch(bool after_gap) {
  counters_.launches.fetch_add(1, std::memory_order_relaxed);
  const uint32_t period = launch_period_.load(std::memory_order_relaxed);
  if (period == 0) return 0;
  ThreadState& t = t_state;
  if (t.launch_countdown > 0) {
    --t.launch_countdown;
    if (!after_gap) return 0;
    // Outside the 1-in-N sample (and its cost budget): the gap bounds how often this happens.
    counters_.gap_enders.fetch_add(1, std::memory_order_relaxed);
    return registry_.Capture();
  }
  t.launch_countdown = period - 1;
  counters_.launches_sampled.fetch_add(1, std::memory_order_relaxed);
  if (!config_.launch_auto) return registry_.Capture();
  const uint64_t start = MonotonicNs();
  const uint32_t site = registry_.Capture();
  Adapt(MonotonicNs() - start);
  return site;
}

void CallSites::Adapt(uint64_t cost_ns) {
  counters_.capture_ns.fetch_add(cost_ns, std::memory_order_relaxed);
  // An EWMA over 1/8: one slow first sight (a new code object, a dladdr) moves the period a
  // little, a steady cost moves it all the way. Racy read-modify-write on purpose: a lost
  // update between two threads only delays the adaptation by a sample.
  const uint64_t old = cost_ewma_ns_.load(std::memory_order_relaxed);
  const uint64_t ewma = old == 0 ? cost_ns : old - old / 8 + cost_ns / 8;
  cost_ewma_ns_.store(ewma, std::memory_order_relaxed);
  const uint64_t period = std::clamp<uint64_t>((ewma + kLaunchBudgetNs - 1) / kLaunchBudgetNs,
                                               kMinAutoPeriod, kMaxAutoPeriod);
  launch_period_.store(static_cast<uint32_t>(period), std::memory_order_relaxed);
}

}  // namespace gpuspy::inject
