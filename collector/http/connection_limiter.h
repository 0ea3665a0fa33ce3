// How many HTTP connections gpuspyd holds open at once, in all and per peer address. A client
// that opens connections and sends nothing (or a byte now and then) costs one thread each
// (connection_threads.h); these caps bound those threads, and the per-peer cap keeps one peer
// from taking every slot, so probes and users from elsewhere are still served.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace gpuspy::collector {

class ConnectionLimiter {
 public:
  ConnectionLimiter(size_t max_connections, size_t max_per_peer)
      : max_connections_(max_connections), max_per_peer_(max_per_peer) {}

  // Takes a slot for socket `fd` from `peer` (its IP address, without the port); false when a cap
  // is reached or Close() ran: the caller closes the socket at once.
  bool Admit(const std::string& peer, int fd);
  // Gives the slot back; the caller closes `fd` only after this (Close() may shut it down until
  // then, never a reused descriptor number).
  void Release(const std::string& peer, int fd);
  // Stop: refuses new connections and shuts down the open ones, so that threads blocked reading
  // a slow client return now instead of at their deadline.
  void Close();
  bool closing() const;

  size_t open() const;
  uint64_t refused() const;

 private:
  const size_t max_connections_;
  const size_t max_per_peer_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, size_t> per_peer_;
  absl::flat_hash_set<int> open_fds_;
  uint64_t refused_ = 0;
  bool closing_ = false;
};

}  // namespace gpuspy::collector
