// GetEvents' paging cursor: where the next page starts, as an opaque token for clients.
//
// A position in stored order, not in time: (process, batch sequence, events of that batch's
// selection already sent). Stored batches never change once acknowledged, so re-reading one
// batch and skipping what was sent gives every event exactly once, and a page costs one batch's
// decoding beyond its own events, wherever it starts (a time-ordered cursor would have to
// re-read every batch overlapping its time, and a long range's batch overlaps the whole run).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::collector {

struct EventCursor {
  uint64_t process_id = 0;  // the process the page starts in (processes go by id)
  uint64_t sequence = 0;    // the batch it starts in
  uint64_t skip = 0;        // events of that batch's selection sent already
};

// The token for `cursor`, bound to `request`'s job, process and window: a token handed to
// another query is refused rather than answered with a page of something else.
std::string EncodeEventCursor(const EventCursor& cursor, const v1::GetEventsRequest& request);

// The cursor in `request.cursor()`; InvalidArgument with a one-line message when it is not one
// of ours or belongs to another query.
absl::StatusOr<EventCursor> DecodeEventCursor(const v1::GetEventsRequest& request);

}  // namespace gpuspy::collector
