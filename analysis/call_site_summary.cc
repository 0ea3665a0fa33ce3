#include "analysis/call_site_summary.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "analysis/evidence.h"
#include "model/units.h"

namespace gpuspy::analysis {

std::vector<CallSiteCount> CallSitesOf(const EventColumns& ev, const StringTable& strings,
                                       Interval w,
                                       const std::function<bool(const ApiEvent&)>& select,
                                       size_t top,
                                       const std::function<CallBytes(const ApiEvent&)>& bytes_of) {
  absl::flat_hash_map<StringRef, CallSiteCount> by_site;
  for (const ApiEvent& a : ev.apis) {
    if (a.call_site == 0 || a.start_ns >= w.end_ns || a.end_ns <= w.start_ns || !select(a)) continue;
    CallSiteCount& c = by_site[a.call_site];
    ++c.calls;
    c.call_ns += a.end_ns - a.start_ns;
    if (bytes_of) {
      const CallBytes b = bytes_of(a);
      c.bytes += b.bytes;
      c.pageable_bytes += b.pageable_bytes;
    }
  }
  std::vector<CallSiteCount> out;
  for (auto& [ref, c] : by_site) {
    c.site = std::string(strings.Get(ref));
    out.push_back(std::move(c));
  }
  const bool by_bytes = static_cast<bool>(bytes_of);
  std::sort(out.begin(), out.end(), [by_bytes](const CallSiteCount& a, const CallSiteCount& b) {
    if (by_bytes && a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.calls != b.calls) return a.calls > b.calls;
    if (a.call_ns != b.call_ns) return a.call_ns > b.call_ns;
    return a.site < b.site;
  });
  if (out.size() > top) out.resize(top);
  return out;
}

std::string Describe(const CallSiteCount& c) {
  return c.site + " x" + std::to_string(c.calls) + DescribeAfterCount(c);
}

void AddHostLineEvidence(v1::Finding* f, const std::vector<HostActivity>& lines, std::string_view after) {
  for (const HostActivity& l : lines) {
    AddEvidence(f, "host_line", l.name + " = ", Ns(l.ns), after);
    f->mutable_evidence(f->evidence_size() - 1)->set_call_site(l.name);  // the viewer links it
  }
}

void AddCallSiteEvidence(v1::Finding* f, const std::string& key, const CallSiteCount& c) {
  AddEvidence(f, key, c.site + " x", Count(c.calls), DescribeAfterCount(c));
  f->mutable_evidence(f->evidence_size() - 1)->set_call_site(c.site);
}

std::string DescribeAfterCount(const CallSiteCount& c) {
  std::string out = " (" + FormatMs(c.call_ns);
  if (c.bytes > 0) {
    out += ", " + FormatBytes(c.bytes);
    if (c.pageable_bytes == c.bytes) {
      out += ", all pageable";
    } else if (c.pageable_bytes > 0) {
      out += ", " + FormatBytes(c.pageable_bytes) + " pageable";
    } else {
      out += ", pinned";
    }
  }
  return out + ")";
}

}  // namespace gpuspy::analysis
