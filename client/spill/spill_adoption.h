// Delivers spill files that processes left behind: a process that ends before the collector took
// everything it spilled (it crashed, or exited while the collector was away or refusing) leaves
// a file nobody will replay. Any later gpuspy process of the same user on the same host claims
// such files (OrphanSpill) and delivers them under their owner's identity, so the events land in
// the right job and process, and batches the collector already stored are skipped, not doubled.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "client/spill/batch_sink.h"
#include "gpuspy/v1/identity.pb.h"

namespace gpuspy::inject {

// The spill file of `identity` in `dir`: named after its process key (host, pid, start time), so
// a later process that reuses the pid never appends to a predecessor's file.
std::string SpillPathFor(const std::string& dir, const v1::ProcessIdentity& identity);

struct AdoptionResult {
  int files_delivered = 0;     // delivered completely and removed
  int files_left = 0;          // orphans still there (collector unreachable, damaged, ...)
  uint64_t batches_delivered = 0;
  uint64_t batches_already_stored = 0;  // skipped: the collector had them (sent before the end)
  uint64_t events_delivered = 0;
  std::string last_problem;  // why the last file left was left, when one was
};

struct AdoptionOptions {
  std::string dir;
  std::string own_path;  // the caller's own spill file: never claimed
  absl::Duration connect_timeout = absl::Seconds(2);
  absl::Duration ack_timeout = absl::Seconds(10);
  // Checked between batches: true ends the adoption early (the process is exiting); what is not
  // delivered stays for the next adopter.
  std::function<bool()> should_stop = [] { return false; };
};

// Claims and delivers every orphaned spill file in options.dir, each on its own session from
// `make_sink`. A file is removed only once all of it is stored; one that fails part-way stays,
// and the next adopter sends it again from the start (the collector skips what it has).
AdoptionResult AdoptOrphanSpills(const AdoptionOptions& options,
                                 const std::function<std::unique_ptr<BatchSink>()>& make_sink);

}  // namespace gpuspy::inject

namespace gpuspy::inject {

// Runs AdoptOrphanSpills on its own thread ("gpuspy-adopt"), so a process's own delivery never
// waits behind another process's spill. The thread shares nothing with its owner but reference
// counted state, so a run stuck on a wedged collector at exit can be left behind safely.
class BackgroundAdoption {
 public:
  BackgroundAdoption(AdoptionOptions options,
                     std::function<std::unique_ptr<BatchSink>()> make_sink);
  ~BackgroundAdoption();
  BackgroundAdoption(const BackgroundAdoption&) = delete;
  BackgroundAdoption& operator=(const BackgroundAdoption&) = delete;

  // Starts a pass over the directory unless one is still running or the owner is stopping.
  void Start();
  // Asks a running pass to end after its current batch and waits up to `timeout` for it.
  void Stop(std::chrono::milliseconds timeout);
  // What every pass so far delivered.
  AdoptionResult totals() const;

 private:
  struct Shared;
  AdoptionOptions options_;
  std::function<std::unique_ptr<BatchSink>()> make_sink_;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace gpuspy::inject

namespace gpuspy::inject {

// One spill file as `gpuspy spill` shows it.
struct SpillInventoryEntry {
  std::string path;
  bool held = false;            // its process still runs (and will deliver it itself)
  v1::ProcessIdentity owner;    // empty when the file cannot be read
  uint64_t batches = 0;
  uint64_t events = 0;
  uint64_t bytes = 0;
  std::string problem;          // why it cannot be read: not a spill file, damaged header, ...
};

// Every spill file in `dir`, by name, without claiming any.
std::vector<SpillInventoryEntry> ListSpills(const std::string& dir);

}  // namespace gpuspy::inject
