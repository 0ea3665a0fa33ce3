#include "inject/core/host_sampler.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "inject/core/monotonic_ns.h"
#include "inject/core/python_frames.h"

namespace gpuspy::inject {
namespace {

// The running sampler, if any: what a pending call finds when CPython runs it.
std::atomic<HostSampler*> g_sampler{nullptr};

}  // namespace

HostSampler::HostSampler(uint32_t hz, CallSites* sites, std::function<int64_t()> now_ns)
    : hz_(std::min(hz, kMaxHostSampleHz)),
      // Two periods: a capture asked for at one tick that has not run by the next but one is
      // waiting for the GIL, not sampling the gap.
      max_delay_ns_(hz_ == 0 ? 0 : std::max<uint64_t>(kMinSampleDelayBoundNs, 2'000'000'000ull / hz_)),
      sites_(sites),
      now_ns_(std::move(now_ns)),
      owner_pid_(getpid()) {}

HostSampler::~HostSampler() { Stop(); }

bool HostSampler::Start() {
  if (hz_ == 0 || sites_ == nullptr || running_.load()) return false;
  if (!PythonFrames::Instance().CanAddPendingCall()) return false;
  HostSampler* expected = nullptr;
  if (!g_sampler.compare_exchange_strong(expected, this)) return false;  // one per process
  {
    std::lock_guard lock(mu_);
    stop_ = false;
  }
  running_.store(true);
  thread_ = std::thread([this] { Run(); });
  return true;
}

void HostSampler::Stop() {
  HostSampler* self = this;
  (void)g_sampler.compare_exchange_strong(self, nullptr);
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  running_.store(false);
}

void HostSampler::Run() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  pthread_setname_np(pthread_self(), "gpuspy-sample");
  const auto period = std::chrono::nanoseconds(1'000'000'000ull / hz_);
  const auto quiet_period = std::max(period, std::chrono::nanoseconds(1'000'000'000ull / kQuietHz));
  auto next = period;
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, next, [this] { return stop_; })) {
    lock.unlock();
    const uint64_t now = MonotonicNs();
    (void)Tick(now);
    const uint64_t seen = gap_seen_ns_.load(std::memory_order_relaxed);
    next = seen != 0 && now - seen < kQuietAfterNs ? period : quiet_period;
    lock.lock();
  }
}

bool HostSampler::Tick(uint64_t now_mono_ns) {
  counters_.ticks.fetch_add(1, std::memory_order_relaxed);
  const CallSites::MainThread main = sites_->main_thread();
  if (main.in_call || main.last_enter_ns == 0 || now_mono_ns < main.last_enter_ns) return false;
  const uint64_t outside = now_mono_ns - main.last_enter_ns;
  if (outside < kMinSampledGapNs || outside > kMaxSampledGapNs) return false;
  gap_seen_ns_.store(now_mono_ns, std::memory_order_relaxed);
  // One capture in flight at a time: CPython's queue (32 calls) is shared with everyone else.
  // One that never ran (the main thread blocked in C for long) is given up after the delay bound.
  if (in_flight_.exchange(true, std::memory_order_acq_rel)) {
    if (now_mono_ns - asked_at_ns_.load(std::memory_order_relaxed) < max_delay_ns_) return false;
  }
  asked_at_ns_.store(now_mono_ns, std::memory_order_relaxed);
  if (!PythonFrames::Instance().AddPendingCall(&HostSampler::Capture, nullptr)) {
    counters_.refused.fetch_add(1, std::memory_order_relaxed);
    in_flight_.store(false, std::memory_order_release);
    return false;
  }
  counters_.requested.fetch_add(1, std::memory_order_relaxed);
  return true;
}

int HostSampler::Capture(void* /*unused*/) {
  HostSampler* self = g_sampler.load(std::memory_order_acquire);
  if (self == nullptr || getpid() != self->owner_pid_) return 0;
  const uint64_t start = MonotonicNs();
  const uint64_t asked = self->asked_at_ns_.load(std::memory_order_relaxed);
  self->in_flight_.store(false, std::memory_order_release);
  HostSamplerCounters& c = self->counters_;
  if (start - asked > self->max_delay_ns_) {
    c.late.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  const uint32_t site = self->sites_->registry()->CapturePython();
  if (site == 0) {
    c.no_frame.fetch_add(1, std::memory_order_relaxed);
  } else {
    if (self->thread_id_.load(std::memory_order_relaxed) == 0) {
      self->thread_id_.store(static_cast<uint32_t>(syscall(SYS_gettid)), std::memory_order_relaxed);
    }
    (void)self->samples_.Push(static_cast<uint64_t>(self->now_ns_()), site);
    c.samples.fetch_add(1, std::memory_order_relaxed);
  }
  c.capture_ns.fetch_add(MonotonicNs() - start, std::memory_order_relaxed);
  return 0;
}

}  // namespace gpuspy::inject
