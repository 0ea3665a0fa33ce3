// The rank of a trace that does not say it (no distributedInfo.rank): what its file name says
// ("rank3.pt.trace.json.gz", "worker_rank-12.json", "sampled_rank_0.json.gz"), else its position
// among the files of the job. One rule for `gpuspy import` and `gpuspy analyze`, which must agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "importers/kineto/kineto_reader.h"

namespace gpuspy::importers {

// The number after "rank" (optionally "-" or "_" between) in the file's name, where "rank" starts
// the name or follows a non-letter; nullopt when the name says no rank.
std::optional<int32_t> RankInFileName(const std::string& path);

int32_t ImpliedRank(const std::string& path, size_t position);

// The files of one job are its ranks, one file each. Two that are the same rank (two single-process
// traces that both say rank 0) are two runs, not one job. So are two files that say no rank at all
// (their ranks are positions) when what they recorded cannot be two ranks of one run: the same
// process (one pid) twice, or spans of time more than kUnrelatedRunGapNs apart (ranks of one job
// run together). nullopt when the files can be one job, else one line naming both files, why,
// and the way out.
struct RankedFile {
  std::string path;
  int32_t rank = 0;
  bool rank_stated = true;  // distributedInfo or the file name said it; false: its position
  uint32_t pid = 0;         // the profiled process's pid; 0 when the trace does not say
  int64_t first_ns = 0;     // the span its events cover (TimeRange); {0, 0} when empty
  int64_t last_ns = 0;
};
std::optional<std::string> NotOneJob(const std::vector<RankedFile>& files);
// A file read as one of a job's files, at `position` on the command line: its rank as
// ImpliedRank gives it, whether the trace or its name stated it, its pid and its span.
RankedFile RankOf(const std::string& path, size_t position, const KinetoTrace& trace);
// The same for one more file: why `f` cannot join `earlier` (which can be one job) in it.
std::optional<std::string> NotOneJobWith(const std::vector<RankedFile>& earlier,
                                         const RankedFile& f);

// Ranks of one job trace the same stretch of the run; an hour between two files' spans is two runs
// (or one process profiled twice), not two ranks whose clocks disagree (clock skew across hosts is
// milliseconds) or whose profilers started at different steps (minutes at most).
inline constexpr int64_t kUnrelatedRunGapNs = 3600LL * 1000 * 1000 * 1000;

}  // namespace gpuspy::importers
