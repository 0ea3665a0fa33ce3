#include "collector/http/connection_threads.h"

#include <utility>

namespace gpuspy::collector {

void ConnectionThreads::JoinFinished(std::unique_lock<std::mutex>& lock) {
  std::vector<std::thread> done;
  for (uint64_t id : finished_) {
    auto it = running_.find(id);
    done.push_back(std::move(it->second));
    running_.erase(it);
  }
  finished_.clear();
  lock.unlock();  // a finished thread may still be returning; it needs no lock for that
  for (std::thread& t : done) t.join();
  lock.lock();
}

void ConnectionThreads::enqueue(std::function<void()> fn) {
  std::unique_lock lock(mu_);
  JoinFinished(lock);
  while (running_.size() >= max_threads_) {
    cv_.wait(lock, [this] { return !finished_.empty(); });
    JoinFinished(lock);
  }
  const uint64_t id = next_id_++;
  running_.emplace(id, std::thread([this, id, fn = std::move(fn)] {
    fn();
    std::lock_guard done(mu_);
    finished_.push_back(id);
    cv_.notify_all();
  }));
}

void ConnectionThreads::shutdown() {
  std::unique_lock lock(mu_);
  while (!running_.empty()) {
    cv_.wait(lock, [this] { return !finished_.empty(); });
    JoinFinished(lock);
  }
}

}  // namespace gpuspy::collector
