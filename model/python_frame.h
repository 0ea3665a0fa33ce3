// A Python frame as a with_stack=True profiler trace names it ("path/train.py(57): forward": a
// python_function event, or one entry of an older cpu_op's "Call stack"), turned into a call
// site (call_site.h: "path/train.py:57 forward") when it is the user's own code. The importer
// names each CUDA call's site with it; the analysis names the lines the host's own work ran.
#pragma once

#include <string>
#include <string_view>

namespace gpuspy {

// "path/train.py(57): forward" -> "path/train.py:57 forward"; empty for frames that are not the
// user's code (the interpreter, torch and other libraries), so that a site names the line a
// user would change.
std::string UserCallSite(std::string_view frame);

}  // namespace gpuspy
