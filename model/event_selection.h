// Which of a process's events belong to a time window, and the first N of them in time order:
// the one rule behind GetEvents, the web timeline and the trace export, applied to columns so
// that no reader has to expand events into messages just to choose them.
#pragma once

#include <cstdint>

#include "model/events.h"

namespace gpuspy {

struct Selection {
  uint64_t events = 0;     // events appended
  bool truncated = false;  // more belonged to the window than `limit`
};

// Appends to `out` the events of `in` that belong to [from_ns, to_ns): spans that touch it,
// point events inside it, and collectives whose kernel (or graph launch, by correlation id) is
// kept; other untimed events (external correlations, time 0) only when 0 is in it. With from_ns
// and to_ns both 0, every event belongs. At most `limit` events are appended: the earliest by
// start time (ties: the order of EventColumns' kinds, then the order in `in`), which is the order
// of ToExpandedEvents; each kind's events come out in that order. Refs are copied as they are:
// they resolve against `in`'s string table.
Selection SelectEvents(const EventColumns& in, int64_t from_ns, int64_t to_ns, uint64_t limit,
                       EventColumns* out);

}  // namespace gpuspy
