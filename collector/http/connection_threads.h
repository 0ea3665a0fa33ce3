// cpp-httplib's task queue for gpuspyd: every accepted connection runs on a thread of its own.
// httplib's default is a fixed pool (8 threads on this machine) and a connection holds its
// thread while it waits for a request, so 8 clients that connect and send slowly left /healthz
// waiting 8.5 s (issue 22; bench/results/http-slow-clients-2026-11-27.md). Here a slow client
// parks only its own thread; ConnectionLimiter bounds how many there are.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "httplib.h"

namespace gpuspy::collector {

class ConnectionThreads : public httplib::TaskQueue {
 public:
  // At most `max_threads` at once: past it enqueue waits (and the kernel's accept backlog holds
  // new connections) instead of starting more.
  explicit ConnectionThreads(size_t max_threads) : max_threads_(max_threads) {}
  ~ConnectionThreads() override { shutdown(); }

  void enqueue(std::function<void()> fn) override;
  // Joins every connection's thread (the listener has stopped accepting).
  void shutdown() override;

 private:
  void JoinFinished(std::unique_lock<std::mutex>& lock);

  const size_t max_threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, std::thread> running_;
  std::vector<uint64_t> finished_;  // ids whose function returned; joined by the next call
  uint64_t next_id_ = 0;
};

}  // namespace gpuspy::collector
