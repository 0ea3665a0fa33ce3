// Runs real binaries from tests: the end-to-end tests start gpuspyd, producers and the CLI as
// separate processes, as users do.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace gpuspy::testing {

struct RunResult {
  int exit_code = -1;  // -signal when killed by a signal
  std::string out;
  std::string err;
};

// Runs to completion, capturing stdout/stderr. `env` entries ("K=V") are added to the
// environment. Kills the child and returns exit_code -9 after `timeout`.
RunResult Run(const std::vector<std::string>& argv, const std::vector<std::string>& env = {},
              std::chrono::seconds timeout = std::chrono::seconds(60));

// A background process (e.g. a daemon). Its stdout/stderr go to `log_path` (or are inherited).
class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::string& log_path = "",
          const std::vector<std::string>& env = {});
  ~Process();  // SIGKILL if still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  // Sends `sig` and waits up to `timeout` for exit; returns the exit code (-signal if killed).
  int Stop(int sig, std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

// A fresh directory under /tmp, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Polls `path` until it holds an integer (a --port-file) or `timeout` passes; 0 on timeout.
int WaitForPortFile(const std::string& path,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));

std::string ReadFile(const std::string& path);

// A loopback TCP port that was free a moment ago (for a daemon that must come back on the same
// port after a restart; otherwise prefer port 0 and a --port-file).
int FreeTcpPort();

}  // namespace gpuspy::testing
