#include "collector/live/connection_registry.h"

#include <algorithm>

namespace gpuspy::collector {

std::string LiveProcess::State() const {
  if (mode != v1::CAPTURE_MODE_DORMANT) return "capturing";
  switch (capture.state()) {
    case v1::CAPTURE_STATE_ARMED:
    case v1::CAPTURE_STATE_CAPTURING:
    case v1::CAPTURE_STATE_DRAINING:
      return "capturing";
    default:
      return "dormant";
  }
}

uint64_t ConnectionRegistry::Opened(uint64_t process_id, const v1::ProcessIdentity& identity,
                                    v1::CaptureMode mode, Pusher pusher, int64_t now_unix_ns) {
  LiveProcess snapshot;
  uint64_t token = 0;
  {
    std::lock_guard lock(mu_);
    Entry& e = live_[process_id];
    e.process.process_id = process_id;
    e.process.identity = identity;
    e.process.mode = mode;
    e.process.last_heartbeat_unix_ns = now_unix_ns;
    token = next_token_++;
    e.streams.push_back({token, std::move(pusher)});
    snapshot = e.process;
  }
  if (observer_ != nullptr) observer_->OnProcessConnected(snapshot);
  return token;
}

void ConnectionRegistry::Closed(uint64_t process_id, uint64_t token) {
  bool gone = false;
  {
    std::lock_guard lock(mu_);
    auto it = live_.find(process_id);
    if (it == live_.end()) return;
    std::erase_if(it->second.streams, [&](const Stream& s) { return s.token == token; });
    if (it->second.streams.empty()) {
      live_.erase(it);
      gone = true;
    }
  }
  if (gone && observer_ != nullptr) observer_->OnProcessClosed(process_id);
}

void ConnectionRegistry::Heartbeat(uint64_t process_id, const v1::Heartbeat& heartbeat,
                                   int64_t now_unix_ns) {
  std::lock_guard lock(mu_);
  auto it = live_.find(process_id);
  if (it == live_.end()) return;
  it->second.process.last_heartbeat_unix_ns = now_unix_ns;
  if (heartbeat.client_unix_ns() != 0) {
    it->second.process.clock_skew_ns = heartbeat.client_unix_ns() - now_unix_ns;
  }
}

void ConnectionRegistry::CaptureStatus(uint64_t process_id, const v1::CaptureStatus& status,
                                       int64_t now_unix_ns) {
  LiveProcess snapshot;
  {
    std::lock_guard lock(mu_);
    auto it = live_.find(process_id);
    if (it == live_.end()) return;
    it->second.process.capture = status;
    it->second.process.last_heartbeat_unix_ns = now_unix_ns;
    snapshot = it->second.process;
  }
  if (observer_ != nullptr) observer_->OnCaptureStatus(snapshot);
}

bool ConnectionRegistry::IsConnected(uint64_t process_id) const {
  std::lock_guard lock(mu_);
  return live_.contains(process_id);
}

std::optional<LiveProcess> ConnectionRegistry::Get(uint64_t process_id) const {
  std::lock_guard lock(mu_);
  auto it = live_.find(process_id);
  if (it == live_.end()) return std::nullopt;
  return it->second.process;
}

std::vector<LiveProcess> ConnectionRegistry::Live(const std::string& job_id) const {
  std::vector<LiveProcess> out;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, e] : live_) {
      if (job_id.empty() || e.process.identity.job_id() == job_id) out.push_back(e.process);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const LiveProcess& a, const LiveProcess& b) { return a.process_id < b.process_id; });
  return out;
}

bool ConnectionRegistry::Push(uint64_t process_id, const v1::ServerMessage& message) {
  Pusher pusher;
  {
    std::lock_guard lock(mu_);
    auto it = live_.find(process_id);
    if (it == live_.end() || it->second.streams.empty()) return false;
    pusher = it->second.streams.back().pusher;
  }
  // Outside the lock: a write may wait on the stream's own lock (an Ack being written).
  return pusher(message);
}

}  // namespace gpuspy::collector
