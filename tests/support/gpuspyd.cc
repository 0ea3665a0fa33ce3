#include "tests/support/gpuspyd.h"

#include <algorithm>
#include <cstdio>

namespace gpuspy::testing {

bool Gpuspyd::Start() {
  Stop(SIGKILL);
  const GpuspydOptions& o = options_;
  auto given = [&](const char* flag) {
    return std::find(o.flags.begin(), o.flags.end(), flag) != o.flags.end();
  };
  const std::string suffix = "." + std::to_string(++starts_);
  const std::string port_file = o.dir + "/" + o.name + ".port" + suffix;
  const std::string http_port_file = o.dir + "/" + o.name + ".http" + suffix;
  std::vector<std::string> argv = {o.binary, "--log-level", o.log_level};
  const bool tcp = o.port >= 0 && !given("--listen");
  if (!given("--listen")) {
    argv.insert(argv.end(), {"--listen", tcp ? "127.0.0.1:" + std::to_string(o.port) : ""});
  }
  if (tcp && !given("--port-file")) argv.insert(argv.end(), {"--port-file", port_file});
  const bool http = o.http && !given("--http");
  if (!given("--http")) {
    argv.insert(argv.end(), {"--http", http ? "127.0.0.1:0" : ""});
    if (http) argv.insert(argv.end(), {"--http-port-file", http_port_file});
  }
  if (!given("--unix")) argv.insert(argv.end(), {"--unix", ""});
  if (!given("--data-dir") && !given("--postgres")) {
    argv.insert(argv.end(), {"--data-dir", data_dir()});
  }
  argv.insert(argv.end(), o.flags.begin(), o.flags.end());
  // A file left by an earlier run of the same name would hand back that run's port.
  std::remove(port_file.c_str());
  std::remove(http_port_file.c_str());
  process_ = std::make_unique<Process>(argv, log_path(), o.env);
  port_ = tcp && !given("--port-file") ? WaitForPortFile(port_file, o.start_timeout) : 0;
  http_port_ = http ? WaitForPortFile(http_port_file, o.start_timeout) : 0;
  return (!tcp || given("--port-file") || port_ > 0) && (!http || http_port_ > 0);
}

int Gpuspyd::Stop(int sig, std::chrono::milliseconds timeout) {
  if (process_ == nullptr) return 0;
  const int code = process_->Stop(sig, timeout);
  process_.reset();
  return code;
}

}  // namespace gpuspy::testing
