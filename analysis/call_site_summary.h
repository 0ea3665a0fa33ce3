// "Where in my code": CUDA calls of a step grouped by their call site (ApiEvent.call_site, the
// Python file:line of the caller, or a native frame), for a finding's evidence. Live capture
// records the site of every blocking call and of launches sampled 1 in N, so launch counts per
// site are a sample: the ranking holds, the absolute counts are the sampled ones.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/host_activity.h"
#include "analysis/intervals.h"
#include "gpuspy/v1/report.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

struct CallSiteCount {
  std::string site;
  uint64_t calls = 0;
  int64_t call_ns = 0;  // host time inside those calls
  // What those calls moved, when the caller says (copies): all of it, and the part that went
  // through pageable host memory.
  uint64_t bytes = 0;
  uint64_t pageable_bytes = 0;
};

// What one call moved, for CallSitesOf's byte counts.
struct CallBytes {
  uint64_t bytes = 0;
  uint64_t pageable_bytes = 0;
};

// Calls overlapping `window` that `select` picks and that have a call site, grouped by site, most
// calls first (then most time), at most `top`; with `bytes_of`, most bytes first (a copy's cost
// is its bytes: one 64 MiB upload a step outweighs ten .item() reads).
std::vector<CallSiteCount> CallSitesOf(
    const EventColumns& events, const StringTable& strings, Interval window,
    const std::function<bool(const ApiEvent&)>& select, size_t top,
    const std::function<CallBytes(const ApiEvent&)>& bytes_of = nullptr);

// "train.py:57 loss_fn x14 (9.5 ms)"; with bytes: "train.py:88 x2 (1.3 ms, 64.0 MiB, all pageable)"
std::string Describe(const CallSiteCount& c);
// What follows the count in Describe: " (9.5 ms, 1.2 MiB, all pageable)".
std::string DescribeAfterCount(const CallSiteCount& c);
// `c` as a finding's evidence: the text Describe gives, the calls as the quantity, and the site
// itself (v1::Evidence.call_site) for viewers to link to.
void AddCallSiteEvidence(v1::Finding* f, const std::string& key, const CallSiteCount& c);
// Each user line that ran in the finding's host time (HostActivityDuring, HostView::kUserLines) as
// "host_line" evidence: "train.py:75 compute_metrics = 3.1 ms<after>", linked to the line.
void AddHostLineEvidence(v1::Finding* f, const std::vector<HostActivity>& lines, std::string_view after);

}  // namespace gpuspy::analysis
