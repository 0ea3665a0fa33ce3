#include "collector/http/connection_limiter.h"

#include <sys/socket.h>

namespace gpuspy::collector {

bool ConnectionLimiter::Admit(const std::string& peer, int fd) {
  std::lock_guard lock(mu_);
  size_t& from_peer = per_peer_[peer];
  if (closing_ || open_fds_.size() >= max_connections_ || from_peer >= max_per_peer_) {
    if (from_peer == 0) per_peer_.erase(peer);
    ++refused_;
    return false;
  }
  ++from_peer;
  open_fds_.insert(fd);
  return true;
}

void ConnectionLimiter::Release(const std::string& peer, int fd) {
  std::lock_guard lock(mu_);
  open_fds_.erase(fd);
  auto it = per_peer_.find(peer);
  if (it != per_peer_.end() && --it->second == 0) per_peer_.erase(it);
}

void ConnectionLimiter::Close() {
  std::lock_guard lock(mu_);
  closing_ = true;
  for (int fd : open_fds_) shutdown(fd, SHUT_RDWR);
}

bool ConnectionLimiter::closing() const {
  std::lock_guard lock(mu_);
  return closing_;
}

size_t ConnectionLimiter::open() const {
  std::lock_guard lock(mu_);
  return open_fds_.size();
}

uint64_t ConnectionLimiter::refused() const {
  std::lock_guard lock(mu_);
  return refused_;
}

}  // namespace gpuspy::collector
