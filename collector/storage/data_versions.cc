#include "collector/storage/data_versions.h"

#include <algorithm>

namespace gpuspy::collector {

void DataVersions::Note(uint64_t process_id, int64_t min_ns) {
  std::lock_guard lock(mu_);
  Process& p = processes_[process_id];
  p.notes.emplace_back(++p.version, min_ns);
  if (p.notes.size() > kNotesKept) p.notes.pop_front();
}

uint64_t DataVersions::Version(uint64_t process_id) const {
  std::lock_guard lock(mu_);
  auto it = processes_.find(process_id);
  return it == processes_.end() ? 0 : it->second.version;
}

int64_t DataVersions::EarliestSince(uint64_t process_id, uint64_t version) const {
  std::lock_guard lock(mu_);
  auto it = processes_.find(process_id);
  if (it == processes_.end() || it->second.version <= version) return kNothing;
  const Process& p = it->second;
  if (p.notes.empty() || p.notes.front().first > version + 1) {
    return std::numeric_limits<int64_t>::min();  // notes lost: everything may have changed
  }
  int64_t earliest = kNothing;
  for (auto n = p.notes.rbegin(); n != p.notes.rend() && n->first > version; ++n) {
    earliest = std::min(earliest, n->second);
  }
  return earliest;
}

}  // namespace gpuspy::collector
