#include "collector/query/event_pages.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>

#include <google/protobuf/io/coded_stream.h>

#include "codec/expanded_events.h"
#include "collector/query/event_cursor.h"
#include "model/event_selection.h"

namespace gpuspy::collector {
namespace {

// Sees one stored batch's events of the query's window, with the strings their refs resolve
// against; false stops the walk.
using SelectedBatchVisitor = std::function<bool(uint64_t process_id, uint64_t sequence,
                                                const EventColumns& selected,
                                                const StringTable& strings)>;

// The events of `request`'s window in the order pages give them: processes by id, each one's
// batches by sequence, from `start` on. Memory: one batch, whatever the job's size.
absl::Status ForEachSelectedBatch(EventReader* reader, std::vector<ProcessRecord> processes,
                                  const v1::GetEventsRequest& request, const EventCursor& start,
                                  const SelectedBatchVisitor& visit) {
  std::sort(processes.begin(), processes.end(),
            [](const ProcessRecord& a, const ProcessRecord& b) { return a.process_id < b.process_id; });
  const bool windowed = request.from_ns() != 0 || request.to_ns() != 0;
  EventColumns selected;
  bool stopped = false;
  for (const ProcessRecord& p : processes) {
    if (p.process_id < start.process_id) continue;
    const uint64_t first = p.process_id == start.process_id ? start.sequence : 0;
    absl::StatusOr<uint64_t> walked = reader->ForEachBatchFrom(
        p.process_id, request.from_ns(), request.to_ns(), first,
        [&](uint64_t sequence, const EventColumns& batch, const StringTable& strings) {
          const EventColumns* chosen = &batch;
          if (windowed) {
            // The batch's own kernels decide which of its collectives belong to the window:
            // producers keep a collective in its kernel's batch (EventColumns::Split).
            selected.clear();
            SelectEvents(batch, request.from_ns(), request.to_ns(),
                         std::numeric_limits<uint64_t>::max(), &selected);
            chosen = &selected;
          }
          if (visit(p.process_id, sequence, *chosen, strings)) return true;
          stopped = true;
          return false;
        });
    if (!walked.ok()) return walked.status();
    if (stopped) break;
  }
  return absl::OkStatus();
}

// At most the earliest start of the events of `request`'s window, from the index (no payload
// read): a time base for writers that must commit to one before the events (0: nothing stored).
absl::StatusOr<int64_t> EarliestEventNs(EventReader* reader,
                                        const std::vector<ProcessRecord>& processes,
                                        const v1::GetEventsRequest& request) {
  std::optional<int64_t> earliest;
  for (const ProcessRecord& p : processes) {
    absl::StatusOr<std::optional<int64_t>> e =
        reader->EarliestNs(p.process_id, request.from_ns(), request.to_ns());
    if (!e.ok()) return e.status();
    if (e->has_value()) earliest = std::min(earliest.value_or(**e), **e);
  }
  return earliest.value_or(0);
}

}  // namespace

absl::StatusOr<v1::GetEventsResponse> ReadEventPage(EventReader* reader,
                                                    std::vector<ProcessRecord> processes,
                                                    const v1::GetEventsRequest& request,
                                                    uint64_t max_page_bytes) {
  EventCursor start;
  v1::GetEventsResponse out;
  if (!request.cursor().empty()) {
    absl::StatusOr<EventCursor> decoded = DecodeEventCursor(request);
    if (!decoded.ok()) return decoded.status();
    start = *decoded;
  } else {
    absl::StatusOr<int64_t> earliest = EarliestEventNs(reader, processes, request);
    if (!earliest.ok()) return earliest.status();
    out.set_earliest_ns(*earliest);
  }
  uint32_t limit = request.limit() == 0 ? kDefaultEventsPerPage : request.limit();
  if (limit > kMaxEventsPerPage) {
    limit = kMaxEventsPerPage;
    out.set_limit_clamped_to(kMaxEventsPerPage);
  }
  uint64_t events = 0, bytes = 0;
  std::optional<EventCursor> next;
  std::vector<v1::Event> expanded;
  v1::ProcessEvents* answer = nullptr;
  absl::Status walked = ForEachSelectedBatch(
      reader, std::move(processes), request, start,
      [&](uint64_t process_id, uint64_t sequence, const EventColumns& selected,
          const StringTable& strings) {
        expanded.clear();
        ToExpandedEvents(selected, strings, &expanded);
        const bool resumed = process_id == start.process_id && sequence == start.sequence;
        for (uint64_t i = resumed ? start.skip : 0; i < expanded.size(); ++i) {
          // As the answer's bytes: each event also costs its field tag and length.
          const uint64_t event_bytes = expanded[i].ByteSizeLong();
          const uint64_t size =
              event_bytes + 1 + google::protobuf::io::CodedOutputStream::VarintSize64(event_bytes);
          if (events == limit || (events > 0 && bytes + size > max_page_bytes)) {
            next = EventCursor{process_id, sequence, i};
            return false;
          }
          if (answer == nullptr || answer->process_id() != process_id) {
            answer = out.add_processes();
            answer->set_process_id(process_id);
          }
          *answer->add_events() = std::move(expanded[i]);
          ++events;
          bytes += size;
        }
        return true;
      });
  if (!walked.ok()) return walked;
  if (next.has_value()) {
    out.set_truncated(true);
    out.set_next_cursor(EncodeEventCursor(*next, request));
  }
  return out;
}

}  // namespace gpuspy::collector
