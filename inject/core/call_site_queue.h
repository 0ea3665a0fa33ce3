// Call sites captured in CUPTI's API callbacks, on their way to the API records they belong to.
// The callback knows the correlation id before CUPTI writes the record, so application threads
// push (correlation id, site id) marks into a bounded lock-free queue and the pipeline thread
// joins them onto the parsed ApiEvents. A full queue drops the mark (counted), never waits.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "inject/core/call_site_registry.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::inject {

// Bounded multi-producer queue (Vyukov's sequence-per-cell ring) of (key, site id) marks; one
// consumer drains it. The key is a correlation id here, a timestamp for host samples.
class CallSiteQueue {
 public:
  explicit CallSiteQueue(uint32_t capacity_log2 = 16);
  CallSiteQueue(const CallSiteQueue&) = delete;
  CallSiteQueue& operator=(const CallSiteQueue&) = delete;

  // Any thread. False (and counted) when full.
  bool Push(uint64_t key, uint32_t site);
  // The consumer: calls f(key, site) for every mark pushed so far.
  template <typename F>
  void Drain(F&& f) {
    uint64_t key = 0;
    uint32_t site = 0;
    while (Pop(&key, &site)) f(key, site);
  }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  bool Pop(uint64_t* key, uint32_t* site);

  struct Cell {
    std::atomic<uint64_t> sequence;
    uint64_t key;
    uint32_t site;
  };
  const uint64_t mask_;
  std::unique_ptr<Cell[]> cells_;
  alignas(64) std::atomic<uint64_t> enqueue_{0};
  alignas(64) uint64_t dequeue_ = 0;  // the consumer's alone
  std::atomic<uint64_t> dropped_{0};
};

struct CallSiteJoinStats {
  uint64_t joined = 0;   // API events given a call site
  uint64_t expired = 0;  // marks whose API record never came (its kind off, or CUPTI dropped it)
};

// The pipeline thread's side: marks -> ApiEvent::call_site, interned into the process's string
// table (a site's text is sent once per process; each event then carries a 1-2 byte ref).
class CallSiteJoiner {
 public:
  CallSiteJoiner(CallSiteQueue* queue, const CallSiteRegistry* registry, StringTable* strings)
      : queue_(queue), registry_(registry), strings_(strings) {}

  // Takes the queued marks, then fills call_site of apis[from, end) that have one.
  void Join(std::vector<ApiEvent>* apis, size_t from);
  const CallSiteJoinStats& stats() const { return stats_; }
  size_t pending() const { return marks_.size(); }
  // A site id's text, interned (0 for an unknown id).
  StringRef Ref(uint32_t site);

 private:
  struct Mark {
    uint32_t site;
    uint32_t round;
  };
  CallSiteQueue* queue_;
  const CallSiteRegistry* registry_;
  StringTable* strings_;
  absl::flat_hash_map<uint64_t, Mark> marks_;
  std::vector<StringRef> refs_;  // site id -> interned ref (0: not yet)
  uint32_t round_ = 0;
  CallSiteJoinStats stats_;
};

}  // namespace gpuspy::inject
