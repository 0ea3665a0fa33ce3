// GetEvents one page at a time: at most a capped number of events (and bytes) per answer, with a
// cursor to the next page (event_cursor.h). A job of 5 M events asked for in one answer took
// gpuspyd from 0.74 to 3.55 GB and failed gRPC's 2 GB message limit (issue 22); a page is
// bounded whatever the job's size or the client's `limit`.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/query/event_reader.h"
#include "collector/storage/store.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::collector {

// Events per page when the request asks for none, and the most it may ask for (more is clamped).
inline constexpr uint32_t kDefaultEventsPerPage = 100'000;
inline constexpr uint32_t kMaxEventsPerPage = 100'000;
// Serialized bytes of a page's events, whichever cap comes first: a page fits gRPC's default
// 4 MiB receive limit, so any client reads it (kernel names of templated code run to kilobytes;
// 100,000 short kernels are ~4.5 MB).
inline constexpr uint64_t kMaxPageBytes = 3 << 20;

// The page of `request` (its cursor, or the first page) over `processes`, the query's processes
// in any order. Processes appear in the answer only with events. A page always holds at least
// one event when any remains, whatever `max_page_bytes`. The first page also says from when the
// events are (earliest_ns, from the index).
absl::StatusOr<v1::GetEventsResponse> ReadEventPage(EventReader* reader,
                                                    std::vector<ProcessRecord> processes,
                                                    const v1::GetEventsRequest& request,
                                                    uint64_t max_page_bytes = kMaxPageBytes);

}  // namespace gpuspy::collector
