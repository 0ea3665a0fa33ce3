// What the fault-injection end-to-end tests share: a gpuspyd that can be SIGKILLed, frozen
// (SIGSTOP) and restarted on the same address and data dir; the environment that injects gpuspy
// into fake_train; and what the collector holds for a job, in a form a test can compare with what
// the program did.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuspy/v1/services.pb.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy::testing {

// One gpuspyd on a fixed loopback port, restartable on the same port and data dir.
class FaultyDaemon {
 public:
  // `dir` holds the data dir, port files and the log.
  explicit FaultyDaemon(std::string dir, std::vector<std::string> extra_args = {});
  ~FaultyDaemon();

  // Starts on the daemon's port (chosen on the first start). False if it did not come up.
  bool Start();
  // Starts on a port nobody else knows (port 0): for looking at the store while producers that
  // retry on the public port cannot reach it.
  bool StartPrivately();
  void Kill();          // SIGKILL, reaped
  int Stop(int sig);    // that signal, then waits; the exit code (-signal if killed)
  void Freeze();        // SIGSTOP: connections open, nothing answers
  void Thaw();          // SIGCONT
  bool running() const { return daemon_.started(); }
  pid_t pid() const;
  int port() const { return port_; }
  std::string address() const;       // the current listener (the private one if so started)
  std::string public_address() const;
  std::string data_dir() const { return daemon_.data_dir(); }
  std::string log() const;
  // VmHWM / VmRSS of the running daemon, KiB (0 if not running).
  long PeakRssKb() const;
  long RssKb() const;

 private:
  bool StartOn(int port);
  Gpuspyd daemon_;
  int port_ = 0;          // the public port
  int current_port_ = 0;  // what the running daemon listens on
};

// The environment `gpuspy run` would give a program, with the fake CUPTI and a private spill dir.
std::vector<std::string> InjectEnv(const std::string& job, const std::string& collector,
                                   const std::string& spill_dir);

// What the collector holds for one process of a job.
struct CollectedProcess {
  uint64_t process_id = 0;
  v1::ProcessInfo info;
  std::map<std::string, int> by_kind;          // "kernels", "runtime_api", ... as fake_train counts
  std::vector<uint64_t> api_correlation_ids;   // every runtime/driver API record, sorted
  std::vector<uint64_t> kernel_correlation_ids;
  std::map<std::string, int> nvtx_ranges;      // range name -> how many times stored
  int events = 0;
  uint64_t dropped() const;                    // events the process reported it could not send
};

// Every process of `job`, by process id; empty when the job is unknown. Without `events`, only
// the process records (counters, loss) are read: for jobs too big to fetch whole.
std::map<uint64_t, CollectedProcess> CollectJob(const std::string& address, const std::string& job,
                                                bool events = true);

// Events fake_train reports in its --expect file (the kinds the collector stores as events).
int Produced(const nlohmann::json& expect);

// Stored = produced - reported drops, and no CUDA call stored twice; with no drops, exactly what
// the program did: every kind's count, every correlation id 1..N once, every ProfilerStep once.
void ExpectAccountedFor(const nlohmann::json& expect, const CollectedProcess& got);

// The collector's own counters.
v1::CollectorStats CollectorStats(const std::string& address);

// The step reports of a job (all steps).
std::vector<v1::StepReport> StepReports(const std::string& address, const std::string& job);

nlohmann::json ReadJson(const std::string& path);

// rank -> events, from gpuspy-replay's "rank R: N events in B batches" lines.
std::map<int, uint64_t> ReplayedEvents(const std::string& replay_output);

// Median and maximum of a list of step times.
struct StepTimes {
  double median_us = 0;
  double p90_us = 0;
  double max_us = 0;
  size_t steps = 0;
};
StepTimes Summarize(std::vector<int64_t> step_us);

// Appends `line` to $GPUSPY_RESULTS_FILE when set (a bench run collecting measured figures), and
// always prints it.
void Record(const std::string& line);

// The seed of a randomized test: $GPUSPY_TEST_SEED if set, else `fallback`; printed either way.
uint64_t TestSeed(uint64_t fallback);

}  // namespace gpuspy::testing
