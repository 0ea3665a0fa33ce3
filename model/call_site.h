// How a call site is written, the same live (inject/core/call_site_registry.cc) and imported
// (importers/kineto/python_call_sites.cc): "path:LINE function", followed by its callers' user
// frames, innermost first, each after kCallerSeparator:
//   "metrics.py:12 log_metrics ← train.py:57 train_step"
#pragma once

#include <string_view>

namespace gpuspy {

inline constexpr std::string_view kCallerSeparator = " \u2190 ";  // " ← "
// Callers kept by default (GPUSPY_CALLSITE_CALLERS live; imported traces always), and at most.
inline constexpr int kDefaultCallSiteCallers = 1;
inline constexpr int kMaxCallSiteCallers = 4;

}  // namespace gpuspy
