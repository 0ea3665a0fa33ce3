// "Where in my code" for imported traces: the Python frames a with_stack=True trace recorded
// (python_function events, or an older trace's cpu_op "Call stack") give each CUDA call the
// innermost frame of the user's own code around it, and its caller's (model/call_site.h: the
// same text as live capture writes).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/events.h"
#include "model/python_frame.h"  // UserCallSite
#include "model/string_table.h"

namespace gpuspy::importers {

// "Call stack" of an older with_stack=True cpu_op ("a.py(12): f;train.py(57): step;...",
// innermost first) -> its innermost user-code frame, or empty.
std::string_view InnermostUserFrame(std::string_view stack);
// The same stack's user-code frames, innermost first, at most `max`.
std::vector<std::string_view> UserFramesOfStack(std::string_view stack, size_t max);

// Sets each API call's call site: the innermost user-code frame open around it on its thread and
// kDefaultCallSiteCallers more user frames outside it, among the python_function ranges of `ev`
// and `stack_frames`. Needs `ev` sorted by start.
void AttachPythonCallSites(EventColumns* ev, StringTable* strings,
                           const std::vector<NvtxRangeEvent>& stack_frames);

}  // namespace gpuspy::importers
