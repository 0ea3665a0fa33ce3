#include "tests/support/subprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

extern char** environ;
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace gpuspy::testing {
namespace {

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// argv/envp are built before fork(): after fork in a multi-threaded test, the child may only
// call async-signal-safe functions (no malloc) until exec.
struct ExecArgs {
  ExecArgs(const std::vector<std::string>& argv, const std::vector<std::string>& env)
      : args(argv) {
    for (char** e = environ; *e != nullptr; ++e) vars.emplace_back(*e);
    for (const auto& kv : env) {
      const std::string key = kv.substr(0, kv.find('=') + 1);
      std::erase_if(vars, [&](const std::string& v) { return v.starts_with(key); });
      vars.push_back(kv);
    }
    argp = CStrings(args);
    envp = CStrings(vars);
  }
  std::vector<std::string> args, vars;
  std::vector<char*> argp, envp;
};

[[noreturn]] void ExecChild(const ExecArgs& a) {
  execvpe(a.argp[0], a.argp.data(), a.envp.data());
  static const char kMsg[] = "exec failed\n";
  (void)!write(2, kMsg, sizeof(kMsg) - 1);
  _exit(127);
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return -1;
}

}  // namespace

RunResult Run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
              std::chrono::seconds timeout) {
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return {};
  const ExecArgs exec_args(argv, env);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    close(out_pipe[1]);
    close(err_pipe[1]);
    ExecChild(exec_args);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  RunResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  bool killed = false;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    if (poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? result.out : result.err).append(buf, n);
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = killed ? -9 : DecodeStatus(status);
  return result;
}

Process::Process(const std::vector<std::string>& argv, const std::string& log_path,
                 const std::vector<std::string>& env) {
  const ExecArgs exec_args(argv, env);
  pid_ = fork();
  if (pid_ == 0) {
    if (!log_path.empty()) {
      const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
      }
    }
    ExecChild(exec_args);
  }
}

bool Process::running() {
  if (reaped_ || pid_ <= 0) return false;
  if (waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  return !reaped_;
}

int Process::Stop(int sig, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  if (!reaped_) {
    kill(pid_, sig);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid_, &status_, WNOHANG) == pid_) {
        reaped_ = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
      reaped_ = true;
      return -SIGKILL;
    }
  }
  return DecodeStatus(status_);
}

Process::~Process() {
  if (pid_ > 0 && !reaped_) Stop(SIGKILL, std::chrono::milliseconds(2000));
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/gpuspy-test.XXXXXX";
  path_ = mkdtemp(tmpl);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

int WaitForPortFile(const std::string& path, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    int port = 0;
    if (in >> port && port > 0) return port;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int FreeTcpPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port > 0 ? port : 20000 + getpid() % 20000;
}

}  // namespace gpuspy::testing
