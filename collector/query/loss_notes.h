// Which steps a process's losses fall into, for the "capture incomplete" note of each step.
//
// Producers report their losses as cumulative counters in every batch (events CUPTI dropped,
// events dropped past the spill bound) and number their batches; the collector can therefore
// place each loss between the last batch stored before it and the first one after: where the
// counters grew, or where sequence numbers are missing (a batch dropped by the producer, or lost
// to a damaged segment). The steps overlapping that stretch of time are the ones whose report is
// incomplete, and each says so: "capture incomplete: 4096 events dropped in steps 3–7 (spill
// bound reached: 4096)". A stretch that swallowed whole steps (their NVTX ranges were dropped
// too, so they are not in the report at all) is told by the steps on either side, naming the
// missing numbers. Steps outside every such stretch are complete and say nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/storage/store.h"

namespace gpuspy::collector {

// One place where a process lost data: [from_ns, to_ns] on its clock.
struct LossSpan {
  int64_t from_ns = 0;
  int64_t to_ns = 0;
  LossCounters dropped;          // what the producer counted as dropped there
  uint64_t batches_missing = 0;  // sequence numbers never stored there
};

// The spans of one process from its stored batches (any order) and its process record (whose
// max_sequence and counters also cover batches after the last one stored).
std::vector<LossSpan> FindLossSpans(std::vector<BatchMark> batches, uint64_t max_sequence,
                                    const LossCounters& latest);

// The notes of a process's steps.
class StepLossNotes {
 public:
  // `steps` in any order.
  StepLossNotes(const std::vector<LossSpan>& spans, std::vector<StepRecord> steps);
  // "" for a step no loss touches.
  std::string For(const StepRecord& step) const;

 private:
  // Consecutive spans touching overlapping step ranges, merged: what one note describes.
  struct Episode {
    int64_t first_step = 0;  // the steps that lost data (empty when first > last: none known
    int64_t last_step = -1;  // by number, the loss lies between two steps)
    int64_t note_first = 0;  // the steps whose reports carry the note
    int64_t note_last = 0;
    bool has_before = false, has_after = false;  // neighbours, for a loss between steps
    LossCounters dropped;
    uint64_t batches_missing = 0;
  };
  std::vector<Episode> episodes_;
};

}  // namespace gpuspy::collector
