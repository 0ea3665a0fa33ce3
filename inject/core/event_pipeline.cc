#include "inject/core/event_pipeline.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>

#include "codec/batch_decoder.h"
#include "inject/core/core_log.h"

namespace gpuspy::inject {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kMaxBackoff{5000};
constexpr absl::Duration kConnectTimeout = absl::Seconds(2);

absl::Duration ToAbsl(std::chrono::milliseconds ms) { return absl::Milliseconds(ms.count()); }

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

EventPipeline::EventPipeline(const CoreConfig& config, const CuptiApi* api,
                             v1::ProcessIdentity identity, std::unique_ptr<BatchSink> sink,
                             BufferPool* pool, CompletedBuffers* completed,
                             std::function<void(bool)> flush,
                             std::function<uint64_t()> dropped_records)
    : config_(config),
      identity_(std::move(identity)),
      sink_(std::move(sink)),
      pool_(pool),
      completed_(completed),
      flush_(std::move(flush)),
      dropped_records_(std::move(dropped_records)),
      parser_(api, &strings_),
      encoder_(&strings_),
      spill_(config.spill_dir + "/" + identity_.host() + "-" + std::to_string(identity_.pid()) +
                 ".spill",
             config.spill_max_bytes) {}

EventPipeline::~EventPipeline() { Stop(std::chrono::milliseconds(0)); }

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
    for (const CompletedBuffer& b : completed_->PopAll(period)) {
      parser_.ParseBuffer(b.data, b.valid_bytes, &pending_);
      pool_->Release(b.data);
    }
    const auto now = Clock::now();
    if (now - last_flush >= period) {
      flush_(false);
      last_flush = now;
    }
    if (pending_.size() >= config_.batch_events || (now - last_cut >= period && !pending_.empty())) {
      CutBatch();
      last_cut = now;
    }
  }
  Drain(true);
  // Say goodbye properly so the collector records a clean close, not a vanished process.
  if (connected_) sink_->Disconnect();
  connected_ = false;
  {
    std::lock_guard lock(done_mu_);
    done_ = true;
  }
  done_cv_.notify_all();
}

void EventPipeline::Drain(bool forced_flush) {
  flush_(forced_flush);
  for (const CompletedBuffer& b : completed_->PopAll(std::chrono::milliseconds(0))) {
    parser_.ParseBuffer(b.data, b.valid_bytes, &pending_);
    pool_->Release(b.data);
  }
  if (!pending_.empty()) CutBatch();
}

LossCounters EventPipeline::Loss() const {
  LossCounters loss;
  loss.cupti_dropped_records = dropped_records_();
  loss.spill_dropped_events = stats_.spill_dropped_events.load();
  return loss;
}

void EventPipeline::CutBatch() {
  // DEVICE records arrive in the first buffers; later (re)connects announce them.
  const auto& devices = parser_.devices();
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
  encoder_.Encode(pending_, next_sequence_++, Loss(), &batch);
  stats_.events.fetch_add(pending_.size());
  pending_.clear();
  Deliver(batch);
}

bool EventPipeline::EnsureConnected() {
  if (connected_) return true;
  const auto now = Clock::now();
  if (now < next_connect_attempt_ && !stopping_.load()) return false;
  if (stopping_.load() && now >= exit_deadline_) return false;
  absl::StatusOr<uint64_t> last = sink_->Connect(identity_, kConnectTimeout);
  if (!last.ok()) {
    if (stats_.connect_failures.fetch_add(1) == 0) {
      Log(LogLevel::kWarn, "collector %s unreachable (%s); spilling to %s until it is back",
          config_.collector.c_str(), std::string(last.status().message()).c_str(),
          spill_.path().c_str());
    }
    next_connect_attempt_ = now + backoff_;
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
    return false;
  }
  Log(LogLevel::kInfo, "connected to %s", config_.collector.c_str());
  connected_ = true;
  backoff_ = std::chrono::milliseconds(100);
  // The collector may have lost what earlier batches defined (restarted with a fresh store).
  encoder_.ResendAllDefinitions();
  return true;
}

void EventPipeline::Spill(const v1::EventBatch& batch) {
  std::string bytes;
  batch.SerializeToString(&bytes);
  absl::Status st = spill_.Append(bytes);
  if (st.ok()) {
    stats_.batches_spilled.fetch_add(1);
    return;
  }
  if (stats_.spill_dropped_events.load() == 0) {
    Log(LogLevel::kWarn, "dropping events: %s", std::string(st.message()).c_str());
  }
  stats_.spill_dropped_events.fetch_add(CountEvents(batch));
  // The dropped batch may have introduced names later batches refer to.
  encoder_.ResendAllDefinitions();
}

void EventPipeline::ReplaySpill() {
  absl::StatusOr<std::vector<std::string>> spilled = spill_.ReadAll();
  if (!spilled.ok()) {
    Log(LogLevel::kWarn, "spill unreadable, discarded: %s",
        std::string(spilled.status().message()).c_str());
    spill_.Clear();
    return;
  }
  spill_.Clear();
  size_t i = 0;
  for (; i < spilled->size() && connected_; ++i) {
    v1::EventBatch batch;
    if (!batch.ParseFromString((*spilled)[i])) continue;
    absl::Status st = sink_->Deliver(batch, ToAbsl(std::chrono::milliseconds(config_.ack_timeout_ms)));
    if (st.ok()) {
      stats_.batches_replayed.fetch_add(1);
    } else if (absl::IsInvalidArgument(st)) {
      stats_.batches_refused.fetch_add(1);
    } else {
      connected_ = false;
      sink_->Disconnect();
      break;
    }
  }
  // What could not be replayed goes back to the spill, in order.
  for (; i < spilled->size(); ++i) (void)spill_.Append((*spilled)[i]);
}

void EventPipeline::Deliver(const v1::EventBatch& batch) {
  if (!EnsureConnected()) {
    Spill(batch);
    return;
  }
  if (!spill_.empty()) ReplaySpill();
  if (!connected_) {
    Spill(batch);
    return;
  }
  auto timeout = std::chrono::milliseconds(config_.ack_timeout_ms);
  if (stopping_.load()) {
    timeout = std::min(timeout, std::chrono::duration_cast<std::chrono::milliseconds>(
                                    exit_deadline_ - Clock::now()));
    if (timeout.count() <= 0) {
      Spill(batch);
      return;
    }
  }
  absl::Status st = sink_->Deliver(batch, ToAbsl(timeout));
  if (st.ok()) {
    stats_.batches_delivered.fetch_add(1);
    return;
  }
  if (absl::IsInvalidArgument(st)) {
    stats_.batches_refused.fetch_add(1);
    Log(LogLevel::kError, "collector refused batch %llu: %s",
        static_cast<unsigned long long>(batch.sequence()), std::string(st.message()).c_str());
    encoder_.ResendAllDefinitions();
    return;
  }
  Log(LogLevel::kInfo, "delivery failed (%s); spilling", std::string(st.message()).c_str());
  connected_ = false;
  sink_->Disconnect();
  Spill(batch);
}

}  // namespace gpuspy::inject
