// A mutex that hands itself over in arrival order. The embedded store's one lock is taken by
// every ingest stream for each batch and by each query for each step window it reads; with
// std::mutex (no order) a query's read could lose to the ingest streams again and again: under
// 12 unpaced producers a step report of a live job waited over 120 s for its reads (issue 34
// item 9, bench/results/report-latency-unpaced-2026-11-28.md). First come, first served bounds
// that wait by the operations queued ahead of it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace gpuspy::collector {

class FairMutex {
 public:
  void lock() {
    std::unique_lock l(mu_);
    const uint64_t ticket = next_++;
    turn_.wait(l, [&] { return serving_ == ticket; });
  }
  void unlock() {
    {
      std::lock_guard l(mu_);
      ++serving_;
    }
    turn_.notify_all();  // the next ticket's holder is one of the waiters
  }

 private:
  std::mutex mu_;
  std::condition_variable turn_;
  uint64_t next_ = 0;     // mu_
  uint64_t serving_ = 0;  // mu_
};

}  // namespace gpuspy::collector
