#include "collector/query/finished_job_reports.h"

#include <algorithm>

namespace gpuspy::collector {

std::vector<FinishedJobReports::Stored> FinishedJobReports::KeyOf(
    const std::vector<ProcessRecord>& processes) {
  std::vector<Stored> key;
  key.reserve(processes.size());
  for (const ProcessRecord& p : processes) {
    key.push_back({p.process_id, p.max_sequence, p.batch_count, p.event_count});
  }
  std::sort(key.begin(), key.end(),
            [](const Stored& a, const Stored& b) { return a.process_id < b.process_id; });
  return key;
}

std::shared_ptr<const FinishedJobReports::Entry> FinishedJobReports::Find(
    const std::string& job, const std::vector<ProcessRecord>& processes) {
  const std::vector<Stored> key = KeyOf(processes);
  std::lock_guard lock(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end() || it->second.key != key) return nullptr;
  it->second.last_used = ++tick_;
  return it->second.entry;
}

std::shared_ptr<const FinishedJobReports::Entry> FinishedJobReports::Put(
    const std::string& job, const std::vector<ProcessRecord>& processes, Reports reports) {
  // Estimated outside the lock: reflection walks every report.
  auto entry = std::make_shared<Entry>();
  entry->bytes = sizeof(Entry) + job.size();
  for (const auto& [process_id, steps] : reports) {
    entry->report_count += steps.size();
    for (const v1::StepReport& r : steps) entry->bytes += r.SpaceUsedLong();
  }
  entry->reports = std::move(reports);
  std::vector<Stored> key = KeyOf(processes);
  std::lock_guard lock(mu_);
  Slot& slot = jobs_[job];
  bytes_ = bytes_ - (slot.entry != nullptr ? slot.entry->bytes : 0) + entry->bytes;
  slot = {std::move(key), entry, ++tick_};
  while (budget_ > 0 && bytes_ > budget_) {
    auto lru = jobs_.end();
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
      if (it->first != job && (lru == jobs_.end() || it->second.last_used < lru->second.last_used)) lru = it;
    }
    if (lru == jobs_.end()) break;
    bytes_ -= lru->second.entry->bytes;
    jobs_.erase(lru);
  }
  return entry;
}

void FinishedJobReports::Forget(const std::string& job) {
  std::lock_guard lock(mu_);
  if (auto it = jobs_.find(job); it != jobs_.end()) {
    bytes_ -= it->second.entry->bytes;
    jobs_.erase(it);
  }
}

uint64_t FinishedJobReports::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

}  // namespace gpuspy::collector
