// Model events <-> expanded gpuspy.v1.Event messages (strings resolved), the form queries return.
#pragma once

#include <vector>

#include "gpuspy/v1/events.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy {

// Appends every event of `events` to `out`, ordered by start time (ties: kind order of Event).
void ToExpandedEvents(const EventColumns& events, const StringTable& strings,
                      std::vector<v1::Event>* out);

// The inverse: interns strings into `strings` and appends to `out`.
void FromExpandedEvent(const v1::Event& event, StringTable* strings, EventColumns* out);

// Start time of any event kind (timestamp for point events).
int64_t StartOf(const v1::Event& event);
// End time of any event kind (the timestamp for point events).
int64_t EndOf(const v1::Event& event);

}  // namespace gpuspy
