// One step's events laid out for the web viewer's timeline (v1::StepTimeline, timeline.proto):
// host threads and GPU streams as lanes, every event as a row of columns with a tooltip text,
// and the GPU's idle time shaded by cause. The idle causes are AttributeIdle's (the rule behind
// the step report's idle figures), so the timeline's shading and the report always agree.
#pragma once

#include "analysis/intervals.h"
#include "analysis/thread_names.h"
#include "gpuspy/v1/timeline.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

// `events` are the step's (any order); `strings` resolves their names; `truncated`: the step
// had more events than were read; `threads` names the host lanes (ThreadDisplayName). Times come
// out relative to window.start_ns. NVTX ranges' depth is their row (NvtxRows), not the recorded
// depth.
v1::StepTimeline BuildStepTimeline(const EventColumns& events, const StringTable& strings,
                                   Interval window, bool truncated, const HostThreads& threads = {});

}  // namespace gpuspy::analysis
