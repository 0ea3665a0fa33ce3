// A step's timeline (v1::StepTimeline, built by analysis/step_timeline.h) in the compact,
// columnar JSON the web viewer's canvas timeline draws. Renders only: every value comes from the
// message.
//
// Per-event JSON objects cost ~250 B each; a step can hold 100k events, so events are columns of
// small integers instead: times in ns relative to the step start (exact in a JS double, unlike
// absolute CUPTI timestamps ~1.7e18), names and details as indexes into one string table.
//
//   {"origin_ns": "<step start, absolute, as a string>", "wall_ns": N,
//    "strings": ["", "cudaLaunchKernel", ...],
//    "lanes": [{"kind": "thread"|"stream", "label": "...", "thread_id"|"device","stream": N}],
//    "kinds": ["kernel", "memcpy", ...],
//    "events": {"lane": [], "kind": [], "start": [], "end": [], "name": [], "info": [],
//               "corr": [], "depth": []},
//    "idle": [[start, end, cause], ...], "idle_causes": ["sync_blocked", ...],
//    "blocking": [[start, end, lane], ...],
//    "truncated": bool}
#pragma once

#include <string>

#include "gpuspy/v1/timeline.pb.h"

namespace gpuspy::collector {

std::string TimelineJson(const v1::StepTimeline& timeline);

}  // namespace gpuspy::collector
