// The processes with an open ingest stream right now: who they are, how they trace, their last
// heartbeat and capture status, and a way to push them commands (attach) on their stream.
// Queries read liveness and state from here; the capture manager pushes through it and hears
// about connects, status changes and disconnects through ProcessObserver.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::collector {

struct LiveProcess {
  uint64_t process_id = 0;
  v1::ProcessIdentity identity;
  v1::CaptureMode mode = v1::CAPTURE_MODE_CONTINUOUS;
  int64_t last_heartbeat_unix_ns = 0;  // collector clock; connect time until the first heartbeat
  int64_t clock_skew_ns = 0;           // client unix clock minus ours, at the last heartbeat
  v1::CaptureStatus capture;           // last capture status the process reported
  // "capturing" (continuous, or inside a window), "dormant".
  std::string State() const;
};

// Told about stream lifecycle events, outside the registry's lock.
class ProcessObserver {
 public:
  virtual ~ProcessObserver() = default;
  virtual void OnProcessConnected(const LiveProcess& process) = 0;
  virtual void OnCaptureStatus(const LiveProcess& process) = 0;
  virtual void OnProcessClosed(uint64_t process_id) = 0;
};

class ConnectionRegistry {
 public:
  // Writes one message on the process's stream; false when the stream is gone.
  using Pusher = std::function<bool(const v1::ServerMessage&)>;

  void set_observer(ProcessObserver* observer) { observer_ = observer; }

  // A stream said Hello and got its Welcome. Returns a token for Closed: a process that
  // reconnects may open its new stream before the old one is torn down.
  uint64_t Opened(uint64_t process_id, const v1::ProcessIdentity& identity, v1::CaptureMode mode,
                  Pusher pusher, int64_t now_unix_ns);
  void Closed(uint64_t process_id, uint64_t token);
  void Heartbeat(uint64_t process_id, const v1::Heartbeat& heartbeat, int64_t now_unix_ns);
  void CaptureStatus(uint64_t process_id, const v1::CaptureStatus& status, int64_t now_unix_ns);

  bool IsConnected(uint64_t process_id) const;
  std::optional<LiveProcess> Get(uint64_t process_id) const;
  // Live processes of `job_id` (every job when empty), by process id.
  std::vector<LiveProcess> Live(const std::string& job_id) const;
  // Pushes on the newest stream of the process; false when it has none or the write failed.
  bool Push(uint64_t process_id, const v1::ServerMessage& message);

 private:
  struct Stream {
    uint64_t token = 0;
    Pusher pusher;
  };
  struct Entry {
    LiveProcess process;
    std::vector<Stream> streams;  // newest last
  };

  mutable std::mutex mu_;
  absl::flat_hash_map<uint64_t, Entry> live_;
  uint64_t next_token_ = 1;
  ProcessObserver* observer_ = nullptr;
};

}  // namespace gpuspy::collector
