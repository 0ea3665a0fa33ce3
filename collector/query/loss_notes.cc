#include "collector/query/loss_notes.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpuspy::collector {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

uint64_t Grew(uint64_t now, uint64_t before) { return now > before ? now - before : 0; }

LossCounters Delta(const LossCounters& now, const LossCounters& before) {
  return {Grew(now.cupti_dropped_records, before.cupti_dropped_records),
          Grew(now.queue_dropped_events, before.queue_dropped_events),
          Grew(now.spill_dropped_events, before.spill_dropped_events)};
}

void Add(LossCounters* to, const LossCounters& d) {
  to->cupti_dropped_records += d.cupti_dropped_records;
  to->queue_dropped_events += d.queue_dropped_events;
  to->spill_dropped_events += d.spill_dropped_events;
}

std::string Steps(int64_t first, int64_t last) {
  if (first == last) return absl::StrCat("step ", first);
  return absl::StrCat("steps ", first, "\u2013", last);  // en dash, as in "steps 3–7"
}

}  // namespace

std::vector<LossSpan> FindLossSpans(std::vector<BatchMark> batches, uint64_t max_sequence,
                                    const LossCounters& latest) {
  std::sort(batches.begin(), batches.end(),
            [](const BatchMark& a, const BatchMark& b) { return a.sequence < b.sequence; });
  std::vector<LossSpan> spans;
  const BatchMark* prev = nullptr;
  for (const BatchMark& b : batches) {
    LossSpan s;
    s.dropped = Delta(b.loss, prev != nullptr ? prev->loss : LossCounters{});
    s.batches_missing = b.sequence - (prev != nullptr ? prev->sequence : 0) - 1;
    if (s.dropped.total() > 0 || s.batches_missing > 0) {
      // Missing batches lie between their neighbours; records CUPTI dropped may also be among
      // the events this batch holds (its buffers filled while records were being dropped).
      s.from_ns = prev != nullptr ? std::min(prev->max_ns, b.min_ns) : kMin;
      s.to_ns = s.dropped.cupti_dropped_records > 0
                    ? b.max_ns
                    : (prev != nullptr ? std::max(prev->max_ns, b.min_ns) : b.min_ns);
      spans.push_back(s);
    }
    prev = &b;
  }
  // After the last stored batch: batches numbered but not stored, or counters only the process
  // record knows.
  LossSpan tail;
  tail.from_ns = prev != nullptr ? prev->max_ns : kMin;
  tail.to_ns = kMax;
  tail.dropped = Delta(latest, prev != nullptr ? prev->loss : LossCounters{});
  tail.batches_missing = max_sequence > (prev != nullptr ? prev->sequence : 0)
                             ? max_sequence - (prev != nullptr ? prev->sequence : 0)
                             : 0;
  if (tail.dropped.total() > 0 || tail.batches_missing > 0) spans.push_back(tail);
  return spans;
}

StepLossNotes::StepLossNotes(const std::vector<LossSpan>& spans, std::vector<StepRecord> steps) {
  std::sort(steps.begin(), steps.end(),
            [](const StepRecord& a, const StepRecord& b) { return a.start_ns < b.start_ns; });
  for (const LossSpan& s : spans) {
    Episode e;
    bool any = false;
    const StepRecord* before = nullptr;  // the last step ending before the span
    const StepRecord* after = nullptr;   // the first step starting after it
    for (const StepRecord& step : steps) {
      const bool overlaps = s.from_ns < s.to_ns
                                ? step.start_ns < s.to_ns && step.end_ns > s.from_ns
                                : step.start_ns <= s.from_ns && s.from_ns <= step.end_ns;
      if (overlaps) {
        if (!any) e.first_step = e.last_step = step.number;
        e.first_step = std::min(e.first_step, step.number);
        e.last_step = std::max(e.last_step, step.number);
        any = true;
      } else if (step.end_ns <= s.from_ns) {
        before = &step;
      } else if (after == nullptr && step.start_ns >= s.to_ns) {
        after = &step;
      }
    }
    if (any) {
      e.note_first = e.first_step;
      e.note_last = e.last_step;
      // Step numbers missing around the overlapping steps vanished inside the same stretch
      // (their NVTX ranges were dropped with the rest).
      if (before != nullptr && before->number + 1 < e.first_step) e.first_step = before->number + 1;
      if (after != nullptr && after->number - 1 > e.last_step) e.last_step = after->number - 1;
    } else {
      // The loss swallowed whole steps (or fell between two): their neighbours tell. Step
      // numbers in between, if any, are the steps that vanished.
      if (before == nullptr && after == nullptr) continue;  // a process without steps
      e.has_before = before != nullptr;
      e.has_after = after != nullptr;
      e.note_first = before != nullptr ? before->number : after->number;
      e.note_last = after != nullptr ? after->number : before->number;
      if (before != nullptr && after != nullptr) {
        e.first_step = before->number + 1;
        e.last_step = after->number - 1;
      }
    }
    e.dropped = s.dropped;
    e.batches_missing = s.batches_missing;
    if (!episodes_.empty() && e.note_first <= episodes_.back().note_last + 1) {
      Episode& last = episodes_.back();
      const bool last_named = last.first_step <= last.last_step;
      const bool e_named = e.first_step <= e.last_step;
      if (e_named && last_named) {
        last.first_step = std::min(last.first_step, e.first_step);
        last.last_step = std::max(last.last_step, e.last_step);
      } else if (e_named) {
        last.first_step = e.first_step;
        last.last_step = e.last_step;
      }
      last.note_first = std::min(last.note_first, e.note_first);
      last.note_last = std::max(last.note_last, e.note_last);
      last.has_before = last.has_before || e.has_before;
      last.has_after = last.has_after || e.has_after;
      Add(&last.dropped, e.dropped);
      last.batches_missing += e.batches_missing;
    } else {
      episodes_.push_back(e);
    }
  }
}

std::string StepLossNotes::For(const StepRecord& step) const {
  std::vector<std::string> parts;
  for (const Episode& e : episodes_) {
    if (step.number < e.note_first || step.number > e.note_last) continue;
    std::string where;
    if (e.first_step <= e.last_step) {
      where = absl::StrCat("in ", Steps(e.first_step, e.last_step));
    } else if (e.has_before && e.has_after) {
      where = absl::StrCat("between step ", e.note_first, " and step ", e.note_last);
    } else {
      where = absl::StrCat(e.has_before ? "after step " : "before step ", e.note_first);
    }
    if (e.dropped.total() > 0) {
      std::vector<std::string> why;
      if (e.dropped.spill_dropped_events > 0) {
        why.push_back(absl::StrCat("spill bound reached: ", e.dropped.spill_dropped_events));
      }
      if (e.dropped.cupti_dropped_records > 0) {
        why.push_back(absl::StrCat("CUPTI buffers full: ", e.dropped.cupti_dropped_records));
      }
      if (e.dropped.queue_dropped_events > 0) {
        why.push_back(absl::StrCat("queue full: ", e.dropped.queue_dropped_events));
      }
      parts.push_back(absl::StrCat(e.dropped.total(), " events dropped ", where, " (",
                                   absl::StrJoin(why, ", "), ")"));
    } else if (e.batches_missing > 0) {
      // Missing batches with no drop counted for them: lost in transit or in storage.
      parts.push_back(absl::StrCat(e.batches_missing,
                                   e.batches_missing == 1 ? " batch missing " : " batches missing ",
                                   where));
    }
  }
  if (parts.empty()) return "";
  return absl::StrCat("capture incomplete: ", absl::StrJoin(parts, "; "));
}

}  // namespace gpuspy::collector
