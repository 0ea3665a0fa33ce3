// Where the pipeline's batches go, and what happens when they cannot: one state machine for the
// connection to the collector (connect, back off, heed an overloaded collector's retry hint),
// delivery with acknowledgement, the spill file while the collector is away or refuses load, and
// the replay of that file, in order, once it is back. At exit, everything is bounded by the exit
// deadline: what cannot be delivered by then stays in the spill file for the next process.
// Runs on the gpuspy-send thread only.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "client/spill/batch_sink.h"
#include "client/spill/spill_file.h"
#include "inject/core/core_config.h"
#include "inject/core/pipeline_stats.h"

namespace gpuspy::inject {

class Delivery {
 public:
  using Clock = std::chrono::steady_clock;
  // How long one attempt to open a stream to the collector may take: this delivery's, and the
  // adoption's of spill files that ended processes left behind (event_pipeline.cc).
  static constexpr absl::Duration kCollectorConnectTimeout = absl::Seconds(2);

  // Set by another thread when the process exits: from then on, waits end at `deadline`.
  struct ExitSignal {
    const std::atomic<bool>* stopping = nullptr;
    const Clock::time_point* deadline = nullptr;
  };
  struct Hooks {
    // The collector may not know what earlier batches defined (it restarted; a batch that defined
    // names was dropped or refused): the encoder must define everything again.
    std::function<void()> resend_definitions = [] {};
    // A session (re)opened: e.g. tell the collector again where a capture window stands.
    std::function<void()> connected = [] {};
  };

  // `identity` is read at each connect (devices are added to it as CUPTI reports them); the
  // spill file is this process's in config.spill_dir.
  Delivery(const CoreConfig& config, const v1::ProcessIdentity* identity,
           std::unique_ptr<BatchSink> sink, PipelineStats* stats, ExitSignal exit, Hooks hooks);

  // Delivers `batch` (holding `events` events), replaying the spill file first so that order is
  // kept; spills it when the collector cannot take it now; counts it as refused (not retried)
  // when the collector says it is invalid.
  void Deliver(const v1::EventBatch& batch, uint64_t events);
  // Opens a session unless one is open, honouring the back-off; false when there is none.
  bool EnsureConnected();
  // Replays the spill file over the open session, stopping at the first failure.
  void ReplaySpill();
  // Heartbeats and capture status: false (and the session dropped) when the stream is gone.
  bool Send(const v1::ClientMessage& message);
  // Drops a session the collector ended while we were quiet (a restart).
  void NoticeClosedStream();
  std::vector<v1::Command> TakeCommands() { return sink_->TakeCommands(); }
  // Ends the session cleanly, so the collector records a close rather than a vanished process.
  void Goodbye();
  void AbandonAfterFork() { spill_.AbandonAfterFork(); }

  bool connected() const { return connected_; }
  bool spill_empty() const { return spill_.empty(); }
  const std::string& spill_path() const { return spill_.path(); }

 private:
  void Spill(const v1::EventBatch& batch, uint64_t events);
  void Disconnected(const absl::Status& why);
  void BackOffFromOverload(const absl::Status& why, Clock::time_point now);
  bool Stopping() const { return exit_.stopping != nullptr && exit_.stopping->load(); }
  // The ack timeout, cut to what is left before the exit deadline while exiting.
  std::chrono::milliseconds AckTimeout() const;

  const CoreConfig config_;
  const v1::ProcessIdentity* identity_;
  std::unique_ptr<BatchSink> sink_;
  SpillFile spill_;
  PipelineStats* stats_;
  ExitSignal exit_;
  Hooks hooks_;
  bool connected_ = false;
  Clock::time_point next_connect_attempt_{};
  std::chrono::milliseconds backoff_{100};
  bool overloaded_ = false;  // the last refusal was RESOURCE_EXHAUSTED (next_connect_attempt_ is its hint)
};

}  // namespace gpuspy::inject
