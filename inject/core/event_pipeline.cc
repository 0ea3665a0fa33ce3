#include "inject/core/event_pipeline.h"

#include <pthread.h>
#include <signal.h>

#include <time.h>

#include "absl/time/time.h"
#include "client/log/log_line.h"

namespace gpuspy::inject {
namespace {

using Clock = std::chrono::steady_clock;

// How often a connected process looks for spill files that ended processes left behind.
constexpr std::chrono::seconds kAdoptionRescan{60};
// How long an exiting process lets an adoption in progress finish its current batch.
constexpr std::chrono::milliseconds kAdoptionExitWait{200};

// Event times without CUPTI (tests): the wall clock.
int64_t WallClockNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

TracingControl WithClock(TracingControl tracing) {
  if (!tracing.now_ns) tracing.now_ns = WallClockNs;
  return tracing;
}

}  // namespace

void CompletedBuffers::Push(CompletedBuffer buffer) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(buffer);
  }
  cv_.notify_one();
}

std::deque<CompletedBuffer> CompletedBuffers::PopAll(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [this] { return !queue_.empty() || woken_; });
  woken_ = false;
  std::deque<CompletedBuffer> out;
  out.swap(queue_);
  return out;
}

void CompletedBuffers::Wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  cv_.notify_one();
}

EventPipeline::EventPipeline(const CoreConfig& config, const MakeRecordParser& make_parser,
                             v1::ProcessIdentity identity, std::unique_ptr<BatchSink> sink,
                             BufferPool* pool, CompletedBuffers* completed,
                             std::function<void(bool)> flush,
                             std::function<uint64_t()> dropped_records, TracingControl tracing)
    : config_(config),
      identity_(std::move(identity)),
      pool_(pool),
      completed_(completed),
      flush_(std::move(flush)),
      dropped_records_(std::move(dropped_records)),
      now_ns_(WithClock(tracing).now_ns),
      parser_(make_parser(&strings_)),
      encoder_(&strings_),
      capture_(config, WithClock(std::move(tracing)), &strings_, &stats_,
               CaptureController::Hooks{
                   .flush = [this](bool forced) { flush_(forced); },
                   .parse = [this] { ParseCompleted(std::chrono::milliseconds(0)); },
                   .route = [this] { Route(); },
                   .deliver = [this] { if (!outgoing_.empty()) CutBatch(); },
                   .connected = [this] { return delivery_.connected(); },
                   .send = [this](const v1::ClientMessage& m) { (void)delivery_.Send(m); },
               }),
      delivery_(config, &identity_, std::move(sink), &stats_,
                Delivery::ExitSignal{.stopping = &stopping_, .deadline = &exit_deadline_},
                Delivery::Hooks{
                    .resend_definitions = [this] { encoder_.ResendAllDefinitions(); },
                    // Tell the (possibly restarted) collector where a window stands.
                    .connected = [this] { capture_.Reconnected(); },
                }) {
  encoder_.SetThreadNames(&thread_names_.names());
}

EventPipeline::~EventPipeline() { Stop(std::chrono::milliseconds(0)); }

void EventPipeline::EnableSpillAdoption(std::function<std::unique_ptr<BatchSink>()> make_sink) {
  if (!config_.adopt_spills) return;
  AdoptionOptions options;
  options.dir = config_.spill_dir;
  options.own_path = delivery_.spill_path();
  options.connect_timeout = Delivery::kCollectorConnectTimeout;
  options.ack_timeout = absl::FromChrono(std::chrono::milliseconds(config_.ack_timeout_ms));
  adoption_ = std::make_unique<BackgroundAdoption>(std::move(options), std::move(make_sink));
}

void EventPipeline::Start() {
  thread_ = std::thread([this] { Run(); });
}

void EventPipeline::Stop(std::chrono::milliseconds timeout) {
  std::call_once(stop_once_, [&] {
    exit_deadline_ = Clock::now() + timeout;
    stopping_.store(true);
    completed_->Wake();
    if (!thread_.joinable()) return;
    std::unique_lock lock(done_mu_);
    if (done_cv_.wait_for(lock, timeout + std::chrono::milliseconds(200), [this] { return done_; })) {
      lock.unlock();
      thread_.join();
    } else {
      // Stuck on a collector that does not answer: never hold the application's exit hostage.
      Log(LogLevel::kWarn, "final delivery did not finish within %lld ms; leaving it behind",
          static_cast<long long>(timeout.count()));
      thread_.detach();
    }
    // Other processes' leftovers are not worth delaying this exit: the next process takes them.
    if (adoption_ != nullptr) adoption_->Stop(kAdoptionExitWait);
  });
}

void EventPipeline::Run() {
  // Signals belong to the application's threads (Python's SIGINT handling, for one).
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  pthread_setname_np(pthread_self(), "gpuspy-send");

  const auto period = std::chrono::milliseconds(config_.flush_period_ms);
  auto last_flush = Clock::now();
  auto last_cut = Clock::now();
  while (!stopping_.load()) {
    ParseCompleted(period);
    const auto now = Clock::now();
    if (now - last_flush >= period) {
      flush_(false);
      if (counters_ != nullptr) counters_->Poll(&pending_.counter_samples);
      last_flush = now;
    }
    Listen(now);
    Route();
    capture_.Tend(now);
    if (outgoing_.size() >= config_.batch_events ||
        (now - last_cut >= period && !outgoing_.empty())) {
      CutBatch();
      last_cut = now;
    }
  }
  Drain(true);
  // Say goodbye properly so the collector records a clean close, not a vanished process.
  delivery_.Goodbye();
  {
    std::lock_guard lock(done_mu_);
    done_ = true;
  }
  done_cv_.notify_all();
}

void EventPipeline::EnableCallSites(CallSiteQueue* queue, const CallSiteRegistry* registry) {
  call_sites_ = std::make_unique<CallSiteJoiner>(queue, registry, &strings_);
}

void EventPipeline::EnableHostSamples(HostSampler* sampler) {
  if (call_sites_ == nullptr) return;
  host_sampler_ = sampler;
  host_sample_domain_ = strings_.Intern(kHostSampleDomain);
}

void EventPipeline::EnableCounters(CounterSampler* counters) { counters_ = counters; }

void EventPipeline::ParseCompleted(std::chrono::milliseconds wait) {
  const size_t apis_before = pending_.apis.size();
  const size_t kernels_before = pending_.kernels.size();
  for (const CompletedBuffer& b : completed_->PopAll(wait)) {
    parser_->ParseBuffer(b.data, b.valid_bytes, &pending_);
    pool_->Release(b.data);
  }
  if (counters_ != nullptr) {
    counters_->StartNoted();  // devices whose context was created since the last loop
    // A device whose context existed before gpuspy (gpuspy attach): sampling starts with its
    // first kernel records.
    for (size_t i = kernels_before; i < pending_.kernels.size(); ++i) {
      const uint32_t device = pending_.kernels[i].stream.device_id;
      const uint64_t bit = device < 64 ? uint64_t{1} << device : 0;
      if (bit != 0 && (counter_devices_ & bit) != 0) continue;
      counter_devices_ |= bit;
      counters_->Watch(device);
    }
  }
  if (call_sites_ != nullptr) {
    // The marks were pushed at the calls' ENTER, before CUPTI wrote these records.
    call_sites_->Join(&pending_.apis, apis_before);
    stats_.call_sites_joined.store(call_sites_->stats().joined, std::memory_order_relaxed);
    stats_.call_sites_expired.store(call_sites_->stats().expired, std::memory_order_relaxed);
  }
  if (host_sampler_ != nullptr) {
    host_sampler_->samples()->Drain([&](uint64_t timestamp_ns, uint32_t site) {
      if (const StringRef name = call_sites_->Ref(site); name != 0) {
        // Read per sample: the sampler sets it before pushing its first sample.
        pending_.nvtx_marks.push_back(NvtxMarkEvent{static_cast<int64_t>(timestamp_ns), host_sample_domain_,
                                                    name, host_sampler_->thread_id()});
      }
    });
  }
  stats_.untimed_records.store(parser_->stats().untimed_records, std::memory_order_relaxed);
  stats_.unreadable_buffers.store(parser_->stats().unreadable_buffers, std::memory_order_relaxed);
}

void EventPipeline::Drain(bool forced_flush) {
  flush_(forced_flush);
  ParseCompleted(std::chrono::milliseconds(0));
  if (counters_ != nullptr) counters_->StopAll(&pending_.counter_samples);
  // The process may be ending inside a window: what was traced up to now is kept.
  const bool in_window = capture_.CloseForExit();
  Route();
  if (!outgoing_.empty()) CutBatch();
  // Nothing new to send, but batches spilled earlier (collector away or overloaded): keep trying
  // until the exit deadline (EnsureConnected waits out an overloaded collector's retry hints).
  while (!delivery_.spill_empty() && delivery_.EnsureConnected()) delivery_.ReplaySpill();
  if (!delivery_.spill_empty()) {
    Log(LogLevel::kWarn,
        "exiting with undelivered events in %s; the next gpuspy process of this user on this "
        "host delivers them (or `gpuspy spill --deliver`)",
        delivery_.spill_path().c_str());
  }
  if (in_window) capture_.ReportExit();  // after the last batch, as in CaptureController::Tend
}

void EventPipeline::Route() {
  if (config_.mode == CaptureMode::kAlways) {
    if (outgoing_.empty()) {
      std::swap(outgoing_, pending_);
    } else {
      outgoing_.Append(pending_);
    }
  } else {
    capture_.Route(std::move(pending_), &outgoing_);
  }
  pending_.clear();
}

void EventPipeline::Listen(Clock::time_point now) {
  // The collector ended the stream while we were quiet (restart): reconnect.
  delivery_.NoticeClosedStream();
  // Dormant processes register at once so an attach can find them; continuous ones connect
  // with their first batch.
  if (!delivery_.connected() && (config_.mode == CaptureMode::kOnDemand || capture_.window_active())) {
    if (!delivery_.EnsureConnected()) return;
  }
  if (!delivery_.connected()) return;
  // A quiet process (dormant, or between windows) sends no batch that would trigger the replay.
  if (!delivery_.spill_empty()) delivery_.ReplaySpill();
  if (!delivery_.connected()) return;
  // The collector is here: a good time to deliver what ended processes left behind.
  if (adoption_ != nullptr && now >= next_adoption_) {
    adoption_->Start();
    next_adoption_ = now + kAdoptionRescan;
  }
  for (const v1::Command& c : delivery_.TakeCommands()) capture_.Handle(c);
  if (now - last_heartbeat_ >= std::chrono::milliseconds(config_.heartbeat_ms)) {
    last_heartbeat_ = now;
    v1::ClientMessage m;
    m.mutable_heartbeat()->set_client_time_ns(now_ns_());
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    m.mutable_heartbeat()->set_client_unix_ns(static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 +
                                              ts.tv_nsec);
    (void)delivery_.Send(m);
  }
}

LossCounters EventPipeline::Loss() const {
  LossCounters loss;
  loss.cupti_dropped_records = dropped_records_();
  loss.spill_dropped_events = stats_.spill_dropped_events.load();
  return loss;
}

void EventPipeline::CutBatch() {
  // DEVICE records arrive in the first buffers; later (re)connects announce them.
  const auto& devices = parser_->devices();
  for (; devices_reported_ < devices.size(); ++devices_reported_) {
    const DeviceInfo& d = devices[devices_reported_];
    v1::Device* out = identity_.add_devices();
    out->set_id(d.id);
    out->set_name(d.name);
    out->set_sm_count(d.sm_count);
    out->set_global_memory_bytes(d.global_memory_bytes);
    out->set_compute_capability_major(d.cc_major);
    out->set_compute_capability_minor(d.cc_minor);
  }
  v1::EventBatch batch;
  thread_names_.Learn(outgoing_);
  encoder_.Encode(outgoing_, next_sequence_++, Loss(), &batch);
  const uint64_t events = outgoing_.size();
  stats_.events.fetch_add(events);
  outgoing_.clear();
  delivery_.Deliver(batch, events);
}

}  // namespace gpuspy::inject
