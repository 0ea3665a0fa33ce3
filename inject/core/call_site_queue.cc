#include "inject/core/call_site_queue.h"

#include <absl/container/flat_hash_map.h>

namespace gpuspy::inject {
namespace {

// A mark waits this many joins (one per pipeline loop: >= 10 ms each at the shortest flush
// period) for its record. Records arrive within a flush period or two, so an older mark's record
// is not coming.
constexpr uint32_t kMarkRounds = 512;
// Beyond this many waiting marks, the old ones go early (bounded memory whatever CUPTI does).
constexpr size_t kMaxMarks = 1u << 18;

}  // namespace

CallSiteQueue::CallSiteQueue(uint32_t capacity_log2)
    : mask_((1ull << capacity_log2) - 1), cells_(new Cell[mask_ + 1]) {
  for (uint64_t i = 0; i <= mask_; ++i) cells_[i].sequence.store(i, std::memory_order_relaxed);
}

bool CallSiteQueue::Push(uint64_t key, uint32_t site) {
  uint64_t pos = enqueue_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[pos & mask_];
    const uint64_t seq = cell.sequence.load(std::memory_order_acquire);
    const int64_t diff = static_cast<int64_t>(seq) - static_cast<int64_t>(pos);
    if (diff == 0) {
      if (enqueue_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        cell.key = key;
        cell.site = site;
        cell.sequence.store(pos + 1, std::memory_order_release);
        return true;
      }
    } else if (diff < 0) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    } else {
      pos = enqueue_.load(std::memory_order_relaxed);
    }
  }
}

bool CallSiteQueue::Pop(uint64_t* key, uint32_t* site) {
  Cell& cell = cells_[dequeue_ & mask_];
  const uint64_t seq = cell.sequence.load(std::memory_order_acquire);
  if (seq != dequeue_ + 1) return false;
  *key = cell.key;
  *site = cell.site;
  cell.sequence.store(dequeue_ + mask_ + 1, std::memory_order_release);
  ++dequeue_;
  return true;
}

StringRef CallSiteJoiner::Ref(uint32_t site) {
  if (site >= refs_.size()) refs_.resize(site + 1, 0);
  if (refs_[site] == 0) {
    const std::string_view text = registry_->Text(site);
    if (text.empty()) return 0;
    refs_[site] = strings_->Intern(text);
  }
  return refs_[site];
}

void CallSiteJoiner::Join(std::vector<ApiEvent>* apis, size_t from) {
  if (queue_ == nullptr) return;
  ++round_;
  queue_->Drain([&](uint64_t correlation_id, uint32_t site) {
    marks_[correlation_id] = {site, round_};
  });
  for (size_t i = from; i < apis->size() && !marks_.empty(); ++i) {
    ApiEvent& e = (*apis)[i];
    auto it = marks_.find(e.correlation_id);
    if (it == marks_.end()) continue;
    e.call_site = Ref(it->second.site);
    stats_.joined += e.call_site != 0;
    marks_.erase(it);
  }
  if (round_ % 64 == 0 || marks_.size() > kMaxMarks) {
    const uint32_t keep = marks_.size() > kMaxMarks ? 1 : kMarkRounds;
    const size_t before = marks_.size();
    absl::erase_if(marks_, [&](const auto& m) { return round_ - m.second.round >= keep; });
    stats_.expired += before - marks_.size();
  }
}

}  // namespace gpuspy::inject
