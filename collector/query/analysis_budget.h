// The memory analysis may use, cache and queries in progress together (--analysis-cache-mb).
// The cache alone was bounded; the analyses a report or summary builds while it runs (copies of
// cached steps, newly analysed steps, the events of the step being analysed) were not, and under
// load (6 producers + 4 query loops) RSS reached 734 MB with a 64 MB budget (issue 22).
//
// Each query holds a Lease and charges it as it builds; a charge first makes room by evicting
// cached analyses (least recently used first), and is refused with RESOURCE_EXHAUSTED when the
// queries in progress would hold more than the budget: load is shed with a clear error instead
// of growing. The one exception: a query whose lease is the only one holding memory is never
// refused, so a job larger than the budget can still be reported, one query at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "absl/status/status.h"
#include "collector/query/analysis_cache.h"

namespace gpuspy::collector {

class AnalysisBudget {
 public:
  // `cache` shares the budget: it holds what queries in progress leave (in_flight_bytes()).
  explicit AnalysisBudget(AnalysisCache* cache) : cache_(cache) {}

  // 0 = unbounded (no charge is refused). Set before serving.
  void set_budget(uint64_t bytes) { budget_ = bytes; }
  uint64_t budget() const { return budget_; }
  // Held by queries in progress now, and charges refused since the start.
  uint64_t in_flight_bytes() const { return in_flight_.load(); }
  uint64_t refusals() const { return refusals_.load(); }
  // For the cache: the counter it must leave room for.
  const std::atomic<uint64_t>* in_flight_counter() const { return &in_flight_; }

  // One query's memory; released when it goes out of scope.
  class Lease {
   public:
    explicit Lease(AnalysisBudget* budget) : budget_(budget) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { Release(bytes_); }
    // Charges `bytes` more; ResourceExhausted (nothing charged) when they do not fit.
    absl::Status Add(uint64_t bytes);
    // Gives back `bytes` of what was charged (a step's events, once it is analysed).
    void Release(uint64_t bytes);
    uint64_t bytes() const { return bytes_; }

   private:
    AnalysisBudget* budget_;
    uint64_t bytes_ = 0;
  };

 private:
  AnalysisCache* cache_;
  uint64_t budget_ = 0;
  std::mutex mu_;  // orders charges; taken before the cache's own lock
  std::atomic<uint64_t> in_flight_{0};
  std::atomic<uint64_t> refusals_{0};
};

}  // namespace gpuspy::collector
