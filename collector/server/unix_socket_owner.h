// Who owns gpuspyd's unix socket path. gRPC unlinks whatever socket sits at a path before binding
// it, so without an owner a second gpuspyd silently took the socket over from a live one, and
// every shutdown (a failed start too) unlinked the path, leaving the live daemon unreachable.
//
// Ownership is a flock on `<socket>.lock`, which also holds the owner's pid for the message a
// second daemon prints. A socket found without a lock holder is probed: one that accepts a
// connection belongs to a daemon that took no lock (an older gpuspyd) and is left alone; one that
// refuses is stale (its daemon died) and is removed. On release, the socket is unlinked only if
// it is still the file this process bound (same inode), and the lock file stays (unlinking a lock
// file lets two processes lock two different files).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace gpuspy::collector {

class UnixSocketOwner {
 public:
  // Takes the path, or FailedPrecondition naming the daemon (pid) that holds it.
  static absl::StatusOr<std::unique_ptr<UnixSocketOwner>> Acquire(const std::string& socket_path);
  ~UnixSocketOwner();  // Release()
  UnixSocketOwner(const UnixSocketOwner&) = delete;
  UnixSocketOwner& operator=(const UnixSocketOwner&) = delete;

  // Remembers the socket now at the path as this process's own (call once it is listening).
  absl::Status Bound();
  // Unlinks the socket if it is still the one Bound() saw; drops the lock.
  void Release();

 private:
  UnixSocketOwner(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  std::string path_;
  int lock_fd_ = -1;
  bool bound_ = false;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

}  // namespace gpuspy::collector
