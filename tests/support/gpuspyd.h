// One gpuspyd process for an end-to-end test: the flags every test would otherwise repeat
// (loopback gRPC on an ephemeral port read back from a --port-file, no unix socket, no HTTP, a
// data dir of its own), restartable on the same data, with its log at hand for failure messages.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"

namespace gpuspy::testing {

struct GpuspydOptions {
  std::string binary{};  // the gpuspyd under test (GPUSPYD_BIN)
  std::string dir{};   // its log and port files, and by default its data (dir/store)
  // Files in `dir` are named after it, so that several daemons can share one directory.
  std::string name = "gpuspyd";
  std::string data_dir{};  // the store's directory; empty = dir/store
  // gRPC listener: 0 = an ephemeral loopback port (read back from a port file), > 0 = that
  // loopback port (to come back on it after a restart), -1 = none (--listen "").
  int port = 0;
  bool http = false;  // HTTP on an ephemeral loopback port (http_port())
  std::string log_level = "warn";
  // Added last. A flag given here replaces its default: --listen, --http, --unix, --data-dir
  // (--postgres also drops --data-dir), --port-file (then port() stays 0).
  std::vector<std::string> flags{};
  std::vector<std::string> env{};  // "K=V" added to the environment
  // How long Start waits for the listeners' port files.
  std::chrono::milliseconds start_timeout{10'000};
};

class Gpuspyd {
 public:
  explicit Gpuspyd(GpuspydOptions options) : options_(std::move(options)) {}
  ~Gpuspyd() { Stop(SIGKILL); }
  Gpuspyd(const Gpuspyd&) = delete;
  Gpuspyd& operator=(const Gpuspyd&) = delete;

  // Starts it (again, on the same data after a Stop); false when a listener it was asked for did
  // not come up within start_timeout (see log()). The process is left running either way.
  bool Start();
  // Sends `sig` and waits up to `timeout` for the exit; returns the exit code (-signal if
  // killed), 0 if not started.
  int Stop(int sig = SIGTERM, std::chrono::milliseconds timeout = std::chrono::milliseconds(10'000));
  // The gRPC port of the next Start (e.g. the one it has now, to come back where producers
  // expect it).
  void set_port(int port) { options_.port = port; }

  bool started() const { return process_ != nullptr; }  // Start ran, no Stop since
  pid_t pid() const { return process_ != nullptr ? process_->pid() : -1; }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int http_port() const { return http_port_; }
  std::string data_dir() const {
    return options_.data_dir.empty() ? options_.dir + "/store" : options_.data_dir;
  }
  std::string log_path() const { return options_.dir + "/" + options_.name + ".log"; }
  std::string log() const { return ReadFile(log_path()); }

 private:
  GpuspydOptions options_;
  std::unique_ptr<Process> process_;
  int port_ = 0;
  int http_port_ = 0;
  int starts_ = 0;
};

}  // namespace gpuspy::testing
