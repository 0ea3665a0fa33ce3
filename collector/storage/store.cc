#include "collector/storage/store.h"

namespace gpuspy::collector {

absl::StatusOr<std::vector<StoredBatch>> Store::ReadBatchesAfter(uint64_t process_id,
                                                                uint64_t after_sequence,
                                                                size_t limit) {
  absl::StatusOr<std::vector<StoredBatch>> all = ReadBatches(process_id, 0, 0);
  if (!all.ok()) return all.status();
  std::vector<StoredBatch> out;
  for (StoredBatch& b : *all) {
    if (b.sequence <= after_sequence) continue;
    if (out.size() >= limit) break;
    out.push_back(std::move(b));
  }
  return out;
}

absl::StatusOr<std::vector<BatchMark>> Store::ListBatchMarks(uint64_t process_id) {
  absl::StatusOr<std::vector<StoredBatch>> all = ReadBatches(process_id, 0, 0);
  if (!all.ok()) return all.status();
  std::vector<BatchMark> out;
  out.reserve(all->size());
  for (const StoredBatch& b : *all) out.push_back({b.sequence, b.min_ns, b.max_ns, b.loss});
  return out;
}

absl::StatusOr<std::vector<ProcessRecord>> Store::FindByContentHash(const std::string& content_sha256) {
  absl::StatusOr<std::vector<ProcessRecord>> all = ListProcesses("");
  if (!all.ok() || content_sha256.empty()) return all.ok() ? std::vector<ProcessRecord>{} : all;
  std::erase_if(*all, [&](const ProcessRecord& p) { return p.identity.content_sha256() != content_sha256; });
  return all;
}

}  // namespace gpuspy::collector
