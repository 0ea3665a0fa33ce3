#include "collector/server/unix_socket_owner.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

// Longer pid files are not ours; a pid fits in far fewer bytes.
constexpr size_t kPidTextBytes = 32;

std::string ReadPid(int fd) {
  char buf[kPidTextBytes] = {};
  const ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return "";
  int pid = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(std::string(buf, static_cast<size_t>(n))), &pid)) {
    return "";
  }
  return absl::StrCat(pid);
}

// Whether a server accepts on the socket at `path`; its pid (SO_PEERCRED) when it does, else 0.
// Refused (or the file is not bound by anyone): stale. Other errors are returned.
absl::StatusOr<pid_t> ProbeListener(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("--unix ", path, " is longer than ",
                                                   sizeof(addr.sun_path) - 1, " bytes"));
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
  pid_t pid = 0;
  absl::Status st = absl::OkStatus();
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
    ucred cred{};
    socklen_t len = sizeof(cred);
    // A live listener with an unknown pid still counts as live.
    pid = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0 ? cred.pid : -1;
  } else if (errno != ECONNREFUSED) {
    st = absl::UnavailableError(
        absl::StrCat("cannot probe the unix socket ", path, ": ", std::strerror(errno)));
  }
  close(fd);
  if (!st.ok()) return st;
  return pid;
}

}  // namespace

absl::StatusOr<std::unique_ptr<UnixSocketOwner>> UnixSocketOwner::Acquire(
    const std::string& socket_path) {
  const std::string lock_path = socket_path + ".lock";
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("cannot open ", lock_path, ": ", std::strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const std::string pid = ReadPid(fd);
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(
        "unix socket ", socket_path, " is in use by another gpuspyd",
        pid.empty() ? "" : absl::StrCat(" (pid ", pid, ")"),
        "; stop it first or choose another --unix"));
  }
  std::unique_ptr<UnixSocketOwner> owner(new UnixSocketOwner(socket_path, fd));
  struct stat st;
  if (lstat(socket_path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat(
          socket_path, " exists and is not a socket; remove it or choose another --unix"));
    }
    absl::StatusOr<pid_t> live = ProbeListener(socket_path);
    if (!live.ok()) return live.status();
    if (*live != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "unix socket ", socket_path, " is in use by another process",
          *live > 0 ? absl::StrCat(" (pid ", *live, ")") : "",
          "; stop it first or choose another --unix"));
    }
    if (unlink(socket_path.c_str()) != 0 && errno != ENOENT) {
      return absl::UnavailableError(
          absl::StrCat("cannot remove the stale socket ", socket_path, ": ", std::strerror(errno)));
    }
    spdlog::info("removed the stale socket {} (no daemon was listening on it)", socket_path);
  }
  const std::string pid = absl::StrCat(getpid(), "\n");
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // Only the message of a second daemon loses its pid; the lock itself holds.
    spdlog::warn("cannot write the pid to {}: {}", lock_path, std::strerror(errno));
  }
  return owner;
}

absl::Status UnixSocketOwner::Bound() {
  struct stat st;
  if (lstat(path_.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
    return absl::UnavailableError(absl::StrCat("unix socket ", path_, " did not appear after bind"));
  }
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  bound_ = true;
  return absl::OkStatus();
}

void UnixSocketOwner::Release() {
  if (lock_fd_ < 0) return;
  struct stat st;
  if (bound_ && lstat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_) {
    unlink(path_.c_str());
  }
  bound_ = false;
  // The pid would name a daemon that is gone; the file stays (see the header).
  (void)!ftruncate(lock_fd_, 0);
  close(lock_fd_);
  lock_fd_ = -1;
}

UnixSocketOwner::~UnixSocketOwner() { Release(); }

}  // namespace gpuspy::collector
