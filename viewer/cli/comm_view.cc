#include "viewer/cli/comm_view.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "model/units.h"
#include "viewer/cli/format.h"

namespace gpuspy::cli {
namespace {

// CommSummary.waited_for_rank / CollectiveWait.last_rank: a peer that sent no events.
constexpr int32_t kPeerNotCaptured = -2;

// "rank 2", "a rank not captured", or "" when nobody was waited for.
std::string WaitedFor(int32_t rank) {
  if (rank >= 0) return absl::StrCat("rank ", rank);
  if (rank == kPeerNotCaptured) return "a rank not captured";
  return "";
}

std::string Gbps(double gbps) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GB/s", gbps);
  return buf;
}

}  // namespace

std::string CommLine(const v1::CommSummary& c) {
  const std::string waited_for = WaitedFor(c.waited_for_rank());
  return absl::StrCat("comm ", Ms(c.comm_ns()), " ms = wait ", Ms(c.wait_ns()),
                      waited_for.empty() ? "" : absl::StrCat(" (for ", waited_for, ")"),
                      " + transfer ", Ms(c.transfer_ns()),
                      c.unattributed_ns() > 0
                          ? absl::StrCat(" (", Ms(c.unattributed_ns()),
                                         " of it unattributed: no peer captured)")
                          : "",
                      "; exposed ", Ms(c.exposed_ns()), " ms",
                      c.bus_bandwidth_gbps() > 0 ? absl::StrCat("; busBw ", Gbps(c.bus_bandwidth_gbps()))
                                                 : "");
}

std::vector<std::string> WaitedCollectives(const v1::CommSummary& c, int max) {
  std::vector<std::string> lines;
  for (const v1::CollectiveWait& w : c.collectives()) {
    if (static_cast<int>(lines.size()) >= max) break;
    if (w.wait_ns() <= 0) continue;
    std::string line = absl::StrCat(w.op().empty() ? "collective" : w.op(), " #", w.index());
    if (!w.group().empty()) absl::StrAppend(&line, " (group ", w.group(), ")");
    absl::StrAppend(&line, ": waited ", Ms(w.wait_ns()), " of ", Ms(w.duration_ns()), " ms");
    if (const std::string last = WaitedFor(w.last_rank()); !last.empty()) {
      absl::StrAppend(&line, " for ", last);
    }
    if (w.bytes() > 0) {
      absl::StrAppend(&line, "; ", FormatBytes(w.bytes()));
      if (w.bus_bandwidth_gbps() > 0) absl::StrAppend(&line, " at ", Gbps(w.bus_bandwidth_gbps()));
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace gpuspy::cli
