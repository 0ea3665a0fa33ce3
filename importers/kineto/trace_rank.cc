#include "importers/kineto/trace_rank.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <tuple>

namespace gpuspy::importers {

std::optional<int32_t> RankInFileName(const std::string& path) {
  const size_t slash = path.rfind('/');
  std::string name = path.substr(slash == std::string::npos ? 0 : slash + 1);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (size_t at = name.find("rank"); at != std::string::npos; at = name.find("rank", at + 1)) {
    if (at > 0 && std::isalpha(static_cast<unsigned char>(name[at - 1]))) continue;  // "frank3"
    size_t i = at + 4;
    if (i < name.size() && (name[i] == '-' || name[i] == '_')) ++i;
    int64_t rank = 0;
    size_t digits = 0;
    for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i, ++digits) {
      rank = rank * 10 + (name[i] - '0');
      if (rank > std::numeric_limits<int32_t>::max()) return std::nullopt;
    }
    if (digits > 0) return static_cast<int32_t>(rank);
  }
  return std::nullopt;
}

int32_t ImpliedRank(const std::string& path, size_t position) {
  return RankInFileName(path).value_or(static_cast<int32_t>(position));
}

namespace {

constexpr char kWayOut[] =
    "the files of one job are its ranks, one each (two separate runs are two jobs: give each its "
    "own --job)";

std::string Hours(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f h", static_cast<double>(ns) / 3.6e12);
  return text;
}

// Why `a` and `b`, neither of which states its rank, are no two ranks of one run; nullopt if they
// can be.
std::optional<std::string> TwoRuns(const RankedFile& a, const RankedFile& b) {
  if (a.pid != 0 && a.pid == b.pid) {
    return a.path + " and " + b.path + " say no rank and are the same process (pid " +
           std::to_string(a.pid) + ") twice, not two ranks: " + kWayOut;
  }
  const bool recorded = a.last_ns > a.first_ns && b.last_ns > b.first_ns;
  const int64_t gap = std::max(a.first_ns, b.first_ns) - std::min(a.last_ns, b.last_ns);
  if (recorded && gap > kUnrelatedRunGapNs) {
    return a.path + " and " + b.path + " say no rank and were recorded " + Hours(gap) +
           " apart, not two ranks of one run: " + kWayOut;
  }
  return std::nullopt;
}

}  // namespace

RankedFile RankOf(const std::string& path, size_t position, const KinetoTrace& trace) {
  RankedFile r;
  r.path = path;
  r.rank = trace.identity.rank();
  if (r.rank < 0) {
    const std::optional<int32_t> named = RankInFileName(path);
    r.rank_stated = named.has_value();
    r.rank = named.value_or(static_cast<int32_t>(position));
  }
  r.pid = trace.identity.pid();
  std::tie(r.first_ns, r.last_ns) = trace.events.TimeRange();
  return r;
}

std::optional<std::string> NotOneJobWith(const std::vector<RankedFile>& earlier,
                                         const RankedFile& f) {
  for (const RankedFile& e : earlier) {
    if (e.rank == f.rank) {
      return e.path + " and " + f.path + " are both rank " + std::to_string(f.rank) + ": " + kWayOut;
    }
  }
  // Files that state their ranks are taken at their word; positions are only a guess.
  if (f.rank_stated) return std::nullopt;
  for (const RankedFile& e : earlier) {
    if (e.rank_stated) continue;
    if (std::optional<std::string> why = TwoRuns(e, f)) return why;
  }
  return std::nullopt;
}

std::optional<std::string> NotOneJob(const std::vector<RankedFile>& files) {
  std::vector<RankedFile> earlier;
  earlier.reserve(files.size());
  for (const RankedFile& f : files) {
    if (std::optional<std::string> why = NotOneJobWith(earlier, f)) return why;
    earlier.push_back(f);
  }
  return std::nullopt;
}

}  // namespace gpuspy::importers
