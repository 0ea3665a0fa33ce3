#include "inject/core/delivery.h"

#include <algorithm>
#include <thread>

#include "client/log/log_line.h"
#include "client/spill/spill_adoption.h"
#include "client/transport/ingest_client.h"

namespace gpuspy::inject {
namespace {

constexpr std::chrono::milliseconds kFirstBackoff{100};
constexpr std::chrono::milliseconds kMaxBackoff{5000};

}  // namespace

Delivery::Delivery(const CoreConfig& config, const v1::ProcessIdentity* identity,
                   std::unique_ptr<BatchSink> sink, PipelineStats* stats, ExitSignal exit,
                   Hooks hooks)
    : config_(config),
      identity_(identity),
      sink_(std::move(sink)),
      spill_(SpillPathFor(config.spill_dir, *identity), config.spill_max_bytes,
             identity->SerializeAsString()),
      stats_(stats),
      exit_(exit),
      hooks_(std::move(hooks)) {}

std::chrono::milliseconds Delivery::AckTimeout() const {
  auto timeout = std::chrono::milliseconds(config_.ack_timeout_ms);
  if (!Stopping()) return timeout;
  return std::min(timeout, std::chrono::duration_cast<std::chrono::milliseconds>(
                               *exit_.deadline - Clock::now()));
}

void Delivery::BackOffFromOverload(const absl::Status& why, Clock::time_point now) {
  if (stats_->overload_refusals.fetch_add(1) == 0) {
    Log(LogLevel::kWarn, "collector %s is overloaded (%s); keeping events in %s and retrying",
        config_.collector.c_str(), std::string(why.message()).c_str(), spill_.path().c_str());
  }
  next_connect_attempt_ = now + absl::ToChronoMilliseconds(OverloadBackoff(why));
  overloaded_ = true;
}

void Delivery::Disconnected(const absl::Status& why) {
  connected_ = false;
  sink_->Disconnect();
  if (absl::IsResourceExhausted(why)) BackOffFromOverload(why, Clock::now());
}

void Delivery::NoticeClosedStream() {
  if (connected_ && !sink_->Connected()) {
    connected_ = false;
    sink_->Disconnect();
  }
}

bool Delivery::Send(const v1::ClientMessage& message) {
  if (!connected_) return false;
  if (sink_->Send(message).ok()) return true;
  connected_ = false;
  sink_->Disconnect();
  return false;
}

void Delivery::Goodbye() {
  if (connected_) sink_->Disconnect();
  connected_ = false;
}

bool Delivery::EnsureConnected() {
  if (connected_) return true;
  absl::StatusOr<uint64_t> last;
  for (;;) {
    const auto now = Clock::now();
    if (Stopping()) {
      if (now >= *exit_.deadline) return false;
      // An overloaded collector's retry hint still holds at exit (hammering it helps nobody);
      // an unreachable one gets one more try at once.
      if (now < next_connect_attempt_ && overloaded_) {
        std::this_thread::sleep_until(std::min(next_connect_attempt_, *exit_.deadline));
        continue;
      }
    } else if (now < next_connect_attempt_) {
      return false;
    }
    last = sink_->Connect(*identity_, kCollectorConnectTimeout);
    if (last.ok()) break;
    if (absl::IsResourceExhausted(last.status())) {
      BackOffFromOverload(last.status(), now);
    } else {
      overloaded_ = false;
      if (stats_->connect_failures.fetch_add(1) == 0) {
        Log(LogLevel::kWarn, "collector %s unreachable (%s); spilling to %s until it is back",
            config_.collector.c_str(), std::string(last.status().message()).c_str(),
            spill_.path().c_str());
      }
      next_connect_attempt_ = now + backoff_;
      backoff_ = std::min(backoff_ * 2, kMaxBackoff);
    }
    // While the process exits, an overloaded collector is waited for within the exit timeout:
    // what is not delivered now stays behind in the spill file. Only the gpuspy-send thread
    // waits here; the application's exit is bounded by the pipeline's Stop timeout.
    if (!Stopping() || !absl::IsResourceExhausted(last.status())) return false;
    const auto wake = std::min(next_connect_attempt_, *exit_.deadline);
    if (wake >= *exit_.deadline) return false;
    std::this_thread::sleep_until(wake);
  }
  Log(LogLevel::kInfo, "connected to %s", config_.collector.c_str());
  connected_ = true;
  overloaded_ = false;
  backoff_ = kFirstBackoff;
  hooks_.connected();
  // The collector may have lost what earlier batches defined (restarted with a fresh store).
  hooks_.resend_definitions();
  return true;
}

void Delivery::Spill(const v1::EventBatch& batch, uint64_t events) {
  std::string bytes;
  batch.SerializeToString(&bytes);
  absl::Status st = spill_.Append(bytes);
  if (st.ok()) {
    stats_->batches_spilled.fetch_add(1);
    return;
  }
  if (stats_->spill_dropped_events.load() == 0) {
    Log(LogLevel::kWarn, "dropping events: %s", std::string(st.message()).c_str());
  }
  stats_->spill_dropped_events.fetch_add(events);
  // The dropped batch may have introduced names later batches refer to.
  hooks_.resend_definitions();
}

void Delivery::ReplaySpill() {
  const absl::Duration timeout = absl::FromChrono(AckTimeout());
  absl::StatusOr<SpillFile::ReplayResult> replayed = spill_.Replay([&](const std::string& bytes) {
    if (!connected_) return false;
    v1::EventBatch batch;
    if (!batch.ParseFromString(bytes)) return true;  // cannot happen: checksummed, ours
    absl::Status st = sink_->Deliver(batch, timeout);
    if (st.ok()) {
      stats_->batches_replayed.fetch_add(1);
    } else if (absl::IsInvalidArgument(st)) {
      stats_->batches_refused.fetch_add(1);
    } else {
      Disconnected(st);
      return false;  // it and the rest stay spilled, in order
    }
    return true;
  });
  if (!replayed.ok()) {
    Log(LogLevel::kWarn, "spill unreadable, discarded: %s",
        std::string(replayed.status().message()).c_str());
  } else if (replayed->torn) {
    Log(LogLevel::kWarn, "spill %s ended in a damaged record; the rest was discarded",
        spill_.path().c_str());
  }
}

void Delivery::Deliver(const v1::EventBatch& batch, uint64_t events) {
  if (!EnsureConnected()) {
    Spill(batch, events);
    return;
  }
  if (!spill_.empty()) ReplaySpill();
  if (!connected_) {
    Spill(batch, events);
    return;
  }
  const std::chrono::milliseconds timeout = AckTimeout();
  if (timeout.count() <= 0) {
    Spill(batch, events);
    return;
  }
  absl::Status st = sink_->Deliver(batch, absl::FromChrono(timeout));
  if (st.ok()) {
    stats_->batches_delivered.fetch_add(1);
    return;
  }
  if (absl::IsInvalidArgument(st)) {
    stats_->batches_refused.fetch_add(1);
    Log(LogLevel::kError, "collector refused batch %llu: %s",
        static_cast<unsigned long long>(batch.sequence()), std::string(st.message()).c_str());
    hooks_.resend_definitions();
    return;
  }
  Log(LogLevel::kInfo, "delivery failed (%s); spilling", std::string(st.message()).c_str());
  Disconnected(st);
  Spill(batch, events);
}

}  // namespace gpuspy::inject
