// The step reports of finished jobs, after their job-level passes (cross-step and cross-rank),
// kept between queries. A finished job's data no longer changes, so its reports are computed once:
// before, each --step/--last of a large finished job copied every step's cached analysis and ran
// the job-level passes over all of them again, 1.0-1.9 s per query for a 15.9 M-event job on the
// 2-core VM, growing with the job (issue 34 item 9, bench/results/report-latency-unpaced-*.md).
//
// An entry stands for the job's processes as they were stored (ids, max sequence, batch and event
// counts: a late batch, a retention eviction or a deleted rank makes it stale). Held within an
// estimated memory budget, least recently used jobs dropped first. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collector/storage/store.h"
#include "gpuspy/v1/report.pb.h"

namespace gpuspy::collector {

class FinishedJobReports {
 public:
  // Each process's step reports, in step order.
  using Reports = std::map<uint64_t, std::vector<v1::StepReport>>;
  struct Entry {
    Reports reports;
    uint64_t bytes = 0;  // estimated memory held
    size_t report_count = 0;
  };

  // The reports of `job` when they were made from `processes` as stored now; null otherwise.
  std::shared_ptr<const Entry> Find(const std::string& job, const std::vector<ProcessRecord>& processes);
  // Keeps `reports` for `job` as made from `processes` (their size estimated here), then drops
  // least recently used jobs (never this one) until within the budget.
  std::shared_ptr<const Entry> Put(const std::string& job, const std::vector<ProcessRecord>& processes,
                                   Reports reports);
  // The job's steps changed while its batches did not (a new step pattern), or the job went.
  void Forget(const std::string& job);

  // 0 = unbounded. Set before serving.
  void set_budget(uint64_t bytes) { budget_ = bytes; }
  uint64_t bytes() const;

 private:
  struct Stored {
    uint64_t process_id, max_sequence, batch_count, event_count;
    bool operator==(const Stored&) const = default;
  };
  static std::vector<Stored> KeyOf(const std::vector<ProcessRecord>& processes);
  struct Slot {
    std::vector<Stored> key;
    std::shared_ptr<const Entry> entry;
    uint64_t last_used = 0;
  };

  mutable std::mutex mu_;
  std::map<std::string, Slot> jobs_;
  uint64_t budget_ = 0;
  uint64_t bytes_ = 0;  // mu_
  uint64_t tick_ = 0;   // mu_
};

}  // namespace gpuspy::collector
