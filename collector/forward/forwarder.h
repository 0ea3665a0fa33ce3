// Node -> hub forwarding. A node gpuspyd (one per GPU host) stores what its local processes send,
// analyses locally, and forwards every stored batch to the hub gpuspyd, where users query any job
// across nodes.
//
// For each process the node holds one ingest stream to the hub that speaks *as that process*:
// same identity (process_key), same batch sequences, the stored bytes unchanged. So:
//   - forwarding is idempotent: after any failure the hub's Welcome says the highest sequence it
//     stored, and forwarding resumes right after it (no duplicates, nothing skipped);
//   - while the hub is down the node's own store is the buffer (bounded by its retention);
//   - the hub sees each process live, with its capture mode, as long as the process is live on
//     the node, so `gpuspy attach` against the hub works: Commands the hub pushes on the stream
//     are relayed to the process through the node's registry, and the process's capture status
//     travels back up.
// One thread drives every process's stream in turn; each stream's reads happen on its own
// IngestClient reader thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/time/time.h"
#include "collector/live/connection_registry.h"
#include "collector/storage/store.h"

namespace gpuspy {
class IngestClient;
}

namespace gpuspy::collector {

struct ForwarderOptions {
  std::string hub;                                   // host:port or unix:/path
  absl::Duration poll = absl::Milliseconds(200);     // how often to look for new batches
  absl::Duration ack_timeout = absl::Seconds(30);
  absl::Duration connect_timeout = absl::Seconds(2);
  size_t batches_per_round = 64;                     // per process, so one busy rank cannot starve others
  absl::Duration heartbeat = absl::Seconds(1);
};

struct ForwarderStats {
  std::atomic<uint64_t> batches_forwarded{0};
  std::atomic<uint64_t> events_forwarded{0};
  std::atomic<uint64_t> batches_already_at_hub{0};  // acknowledged as duplicates
  std::atomic<uint64_t> connect_failures{0};         // rounds cut short: the hub was unreachable
  std::atomic<uint64_t> hub_refusals{0};             // a process turned away by an overloaded hub
  std::atomic<uint64_t> commands_relayed{0};
  std::atomic<uint64_t> lag_batches{0};             // stored here, not yet acknowledged by the hub
};

class Forwarder {
 public:
  Forwarder(Store* store, ConnectionRegistry* connections, ForwarderOptions options);
  ~Forwarder();

  void Start();
  // Stops the thread and closes every hub stream (bounded by the ack timeout).
  void Stop();
  const ForwarderStats& stats() const { return stats_; }
  void FillProto(v1::ForwardStats* out) const;

 private:
  struct Session;
  void Run();
  void Round();
  // Brings one process up to date with the hub; false when the hub could not be reached.
  bool Forward(const ProcessRecord& process, Session& s);
  // ResourceExhausted: the hub refused this process for now (Refused); other errors: unreachable.
  absl::Status Connect(const ProcessRecord& process, Session& s);
  // The hub is overloaded: this process waits for its retry hint; the others go on.
  void Refused(uint64_t process_id, Session& s, const absl::Status& why);
  void Relay(uint64_t process_id, Session& s);
  void Drop(Session& s);

  Store* store_;
  ConnectionRegistry* connections_;
  const ForwarderOptions options_;
  ForwarderStats stats_;
  std::map<uint64_t, std::unique_ptr<Session>> sessions_;  // by process id; forwarder thread only
  absl::Time hub_retry_at_ = absl::InfinitePast();
  absl::Duration backoff_ = absl::Milliseconds(100);
  bool hub_down_logged_ = false;  // one warning per outage

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpuspy::collector
