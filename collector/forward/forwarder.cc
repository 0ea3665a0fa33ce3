#include "collector/forward/forwarder.h"

#include <pthread.h>

#include <algorithm>

#include "absl/time/clock.h"
#include "client/transport/ingest_client.h"
#include "gpuspy/v1/services.pb.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {

constexpr absl::Duration kMaxBackoff = absl::Seconds(5);

struct Forwarder::Session {
  std::unique_ptr<IngestClient> client;
  uint64_t acked = 0;            // highest sequence the hub has stored
  bool known = false;            // `acked` is the hub's word (we have connected once)
  v1::CaptureMode mode = v1::CAPTURE_MODE_CONTINUOUS;
  std::string relayed_status;    // last capture status sent up (serialized)
  absl::Time last_sent = absl::InfinitePast();
  // The hub turned this process away (RESOURCE_EXHAUSTED): not before its retry hint. The other
  // processes go on; an overloaded hub is not an unreachable one.
  absl::Time retry_at = absl::InfinitePast();
};

Forwarder::Forwarder(Store* store, ConnectionRegistry* connections, ForwarderOptions options)
    : store_(store), connections_(connections), options_(std::move(options)) {}

Forwarder::~Forwarder() { Stop(); }

void Forwarder::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Forwarder::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Forwarder::Run() {
  pthread_setname_np(pthread_self(), "gpuspy-forward");
  for (;;) {
    Round();
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, absl::ToChronoMilliseconds(options_.poll), [this] { return stopping_; });
    if (stopping_) break;
  }
  for (auto& [id, s] : sessions_) {
    if (s->client != nullptr) (void)s->client->Close(absl::Seconds(2));
  }
  sessions_.clear();
}

void Forwarder::Round() {
  if (absl::Now() < hub_retry_at_) return;
  absl::StatusOr<std::vector<ProcessRecord>> processes = store_->ListProcesses("");
  if (!processes.ok()) {
    spdlog::warn("forward: cannot list processes: {}", processes.status().ToString());
    return;
  }
  uint64_t lag = 0;
  for (const ProcessRecord& p : *processes) {
    std::unique_ptr<Session>& s = sessions_[p.process_id];
    if (s == nullptr) s = std::make_unique<Session>();
    if (absl::Now() < s->retry_at) {
      if (p.max_sequence > s->acked) lag += p.max_sequence - s->acked;
      continue;
    }
    if (!Forward(p, *s)) {
      // The hub is unreachable: back off for everyone rather than time out per process.
      stats_.connect_failures.fetch_add(1, std::memory_order_relaxed);
      hub_retry_at_ = absl::Now() + backoff_;
      backoff_ = std::min(backoff_ * 2, kMaxBackoff);
      return;
    }
    if (p.max_sequence > s->acked) lag += p.max_sequence - s->acked;
  }
  backoff_ = absl::Milliseconds(100);
  stats_.lag_batches.store(lag, std::memory_order_relaxed);
}

void Forwarder::FillProto(v1::ForwardStats* out) const {
  auto get = [](const std::atomic<uint64_t>& v) { return v.load(std::memory_order_relaxed); };
  out->set_hub(options_.hub);
  out->set_batches_forwarded(get(stats_.batches_forwarded));
  out->set_events_forwarded(get(stats_.events_forwarded));
  out->set_batches_already_at_hub(get(stats_.batches_already_at_hub));
  out->set_hub_unreachable(get(stats_.connect_failures));
  out->set_hub_refusals(get(stats_.hub_refusals));
  out->set_lag_batches(get(stats_.lag_batches));
  out->set_commands_relayed(get(stats_.commands_relayed));
}

void Forwarder::Drop(Session& s) {
  s.client.reset();
  s.relayed_status.clear();
}

void Forwarder::Refused(uint64_t process_id, Session& s, const absl::Status& why) {
  Drop(s);
  s.retry_at = absl::Now() + OverloadBackoff(why);
  if (stats_.hub_refusals.fetch_add(1, std::memory_order_relaxed) == 0) {
    spdlog::warn("forward: hub {} is overloaded ({}); process {} and any others it turns away "
                 "wait for its retry hint, the rest go on",
                 options_.hub, std::string(why.message()), process_id);
  }
}

absl::Status Forwarder::Connect(const ProcessRecord& p, Session& s) {
  std::optional<LiveProcess> live = connections_->Get(p.process_id);
  s.mode = live.has_value() ? live->mode : v1::CAPTURE_MODE_CONTINUOUS;
  auto client = std::make_unique<IngestClient>();
  client->set_mode(s.mode);
  absl::Status st = client->Connect(options_.hub, p.identity, options_.connect_timeout);
  // The hub holds this import's file already (forwarded before this node restarted, or imported
  // there too): it refuses a second Hello for it (ingest claims a file once), and nothing of it is
  // left to send.
  if (absl::IsAlreadyExists(st) && !p.identity.content_sha256().empty()) {
    s.known = true;
    s.acked = p.max_sequence;
    return absl::OkStatus();
  }
  if (absl::IsResourceExhausted(st)) {
    Refused(p.process_id, s, st);
    return st;
  }
  if (!st.ok()) {
    if (!hub_down_logged_ || absl::IsInvalidArgument(st)) {
      spdlog::warn("forward: hub {}: {}; storing here and retrying", options_.hub, st.ToString());
      hub_down_logged_ = true;
    }
    return st;
  }
  if (hub_down_logged_) spdlog::info("forward: hub {} reachable again", options_.hub);
  hub_down_logged_ = false;
  s.acked = client->last_stored_sequence();
  s.known = true;
  s.client = std::move(client);
  s.last_sent = absl::Now();
  return absl::OkStatus();
}

bool Forwarder::Forward(const ProcessRecord& p, Session& s) {
  const bool live = connections_->IsConnected(p.process_id);
  if (s.client != nullptr && !s.client->connected()) Drop(s);
  const bool behind = !s.known || p.max_sequence > s.acked;
  if (s.client == nullptr) {
    if (!live && !behind) return true;  // finished, and the hub has all of it
    if (absl::Status st = Connect(p, s); !st.ok()) return absl::IsResourceExhausted(st);
  } else if (live) {
    // A mode change (the process reconnected dormant after a continuous run) needs a new Hello.
    std::optional<LiveProcess> now = connections_->Get(p.process_id);
    if (now.has_value() && now->mode != s.mode) {
      (void)s.client->Close(absl::Seconds(1));
      Drop(s);
      if (absl::Status st = Connect(p, s); !st.ok()) return absl::IsResourceExhausted(st);
    }
  }

  if (p.max_sequence > s.acked) {
    absl::StatusOr<std::vector<StoredBatch>> batches =
        store_->ReadBatchesAfter(p.process_id, s.acked, options_.batches_per_round);
    if (!batches.ok()) {
      spdlog::warn("forward: process {}: {}", p.process_id, batches.status().ToString());
      return true;  // a local read problem, not the hub's: try again next round
    }
    uint64_t last = 0, events = 0;
    for (const StoredBatch& b : *batches) {
      v1::EventBatch batch;
      if (!batch.ParseFromString(b.payload)) continue;  // stored bytes checked on read; cannot happen
      if (!s.client->Send(batch).ok()) {
        Drop(s);
        return false;
      }
      last = b.sequence;
      events += b.event_count;
    }
    if (last > 0) {
      const uint64_t duplicates_before = s.client->duplicate_acks();
      absl::Status st = s.client->WaitForAcks(last, options_.ack_timeout);
      if (absl::IsResourceExhausted(st)) {
        Refused(p.process_id, s, st);  // kept here; sent again after the hint
        return true;
      }
      if (!st.ok()) {
        spdlog::warn("forward: process {} to hub {}: {}", p.process_id, options_.hub, st.ToString());
        Drop(s);
        // A refused batch is not a reachability problem; the others still go.
        return absl::IsInvalidArgument(st);
      }
      stats_.batches_forwarded.fetch_add(batches->size(), std::memory_order_relaxed);
      stats_.events_forwarded.fetch_add(events, std::memory_order_relaxed);
      stats_.batches_already_at_hub.fetch_add(s.client->duplicate_acks() - duplicates_before,
                                              std::memory_order_relaxed);
      s.acked = last;
      s.last_sent = absl::Now();
    }
  }
  Relay(p.process_id, s);
  if (s.client == nullptr) return true;
  if (!live && p.max_sequence <= s.acked) {
    // The process is gone and the hub has everything: say goodbye like the process did.
    (void)s.client->Close(absl::Seconds(2));
    Drop(s);
  }
  return true;
}

void Forwarder::Relay(uint64_t process_id, Session& s) {
  if (s.client == nullptr) return;
  // Down: attach/detach commands from the hub go to the process on its own stream here.
  for (const v1::Command& c : s.client->TakeCommands()) {
    v1::ServerMessage m;
    *m.mutable_command() = c;
    if (connections_->Push(process_id, m)) stats_.commands_relayed.fetch_add(1, std::memory_order_relaxed);
  }
  // Up: the process's capture status, and a heartbeat when quiet.
  std::optional<LiveProcess> live = connections_->Get(process_id);
  if (live.has_value() && live->capture.capture_id() != 0) {
    std::string status = live->capture.SerializeAsString();
    if (status != s.relayed_status) {
      v1::ClientMessage m;
      *m.mutable_capture_status() = live->capture;
      if (!s.client->SendMessage(m).ok()) {
        Drop(s);
        return;
      }
      s.relayed_status = std::move(status);
      s.last_sent = absl::Now();
    }
  }
  if (live.has_value() && absl::Now() - s.last_sent >= options_.heartbeat) {
    v1::ClientMessage m;
    m.mutable_heartbeat()->set_client_unix_ns(absl::ToUnixNanos(absl::Now()));
    if (!s.client->SendMessage(m).ok()) {
      Drop(s);
      return;
    }
    s.last_sent = absl::Now();
  }
}

}  // namespace gpuspy::collector
