#include "collector/query/analysis_cache.h"

namespace gpuspy::collector {

uint64_t EstimatedBytes(const analysis::StepAnalysis& a) {
  uint64_t bytes = sizeof(a) + a.report.SpaceUsedLong();
  for (const std::string& k : a.kernel_names) bytes += sizeof(k) + k.capacity();
  return bytes + a.collectives->ApproxBytes();
}

std::optional<std::vector<analysis::StepAnalysis>> AnalysisCache::Find(
    const ProcessRecord& process, size_t step_count, CachedAnalyses* previous,
    uint64_t* copied_bytes) {
  std::lock_guard lock(mu_);
  auto it = analyses_.find(process.process_id);
  if (it == analyses_.end()) return std::nullopt;
  if (copied_bytes != nullptr) *copied_bytes = it->second.bytes;
  if (it->second.max_sequence == process.max_sequence &&
      it->second.batch_count == process.batch_count && it->second.step_count == step_count) {
    it->second.last_used = ++tick_;
    return it->second.steps;
  }
  if (previous != nullptr) {
    *previous = it->second;
  } else if (copied_bytes != nullptr) {
    *copied_bytes = 0;
  }
  return std::nullopt;
}

bool AnalysisCache::IsCurrent(const ProcessRecord& process) const {
  std::lock_guard lock(mu_);
  auto it = analyses_.find(process.process_id);
  return it != analyses_.end() && it->second.max_sequence == process.max_sequence &&
         it->second.batch_count == process.batch_count;
}

bool AnalysisCache::EvictOneLocked(uint64_t keep) {
  auto lru = analyses_.end();
  for (auto it = analyses_.begin(); it != analyses_.end(); ++it) {
    if (it->first == keep) continue;
    if (lru == analyses_.end() || it->second.last_used < lru->second.last_used) lru = it;
  }
  if (lru == analyses_.end()) return false;
  bytes_ -= lru->second.bytes;
  analyses_.erase(lru);
  evictions_.fetch_add(1);
  return true;
}

void AnalysisCache::EvictDownTo(uint64_t bytes) {
  std::lock_guard lock(mu_);
  while (bytes_ > bytes && EvictOneLocked(0)) {
  }
}

void AnalysisCache::Put(uint64_t process_id, CachedAnalyses entry) {
  // Estimated outside the lock (reflection walks every report).
  entry.bytes = sizeof(CachedAnalyses);
  for (const analysis::StepAnalysis& a : entry.steps) entry.bytes += EstimatedBytes(a);
  for (const auto& [n, note] : entry.window_notes) entry.bytes += 64 + note.capacity();
  std::lock_guard lock(mu_);
  entry.last_used = ++tick_;
  CachedAnalyses& slot = analyses_[process_id];
  bytes_ = bytes_ - slot.bytes + entry.bytes;
  slot = std::move(entry);
  const uint64_t in_flight = in_flight_ != nullptr ? in_flight_->load() : 0;
  const uint64_t room = budget_ > in_flight ? budget_ - in_flight : 0;
  while (budget_ > 0 && bytes_ > room && EvictOneLocked(process_id)) {
  }
}

std::optional<std::vector<StepRecord>> AnalysisCache::FindDetectedSteps(
    const ProcessRecord& process) const {
  std::lock_guard lock(mu_);
  auto it = detected_steps_.find(process.process_id);
  if (it != detected_steps_.end() && it->second.max_sequence == process.max_sequence &&
      it->second.batch_count == process.batch_count) {
    return it->second.steps;
  }
  return std::nullopt;
}

void AnalysisCache::PutDetectedSteps(const ProcessRecord& process, std::vector<StepRecord> steps) {
  std::lock_guard lock(mu_);
  detected_steps_[process.process_id] = {process.max_sequence, process.batch_count,
                                         std::move(steps)};
}

void AnalysisCache::Forget(uint64_t process_id) {
  std::lock_guard lock(mu_);
  if (auto it = analyses_.find(process_id); it != analyses_.end()) {
    bytes_ -= it->second.bytes;
    analyses_.erase(it);
  }
  detected_steps_.erase(process_id);
}

uint64_t AnalysisCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

}  // namespace gpuspy::collector
