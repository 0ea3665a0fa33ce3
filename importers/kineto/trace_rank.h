// The rank of a trace that does not say it (no distributedInfo.rank): what its file name says
// ("rank3.pt.trace.json.gz", "worker_rank-12.json", "sampled_rank_0.json.gz"), else its position
// among the files of the job. One rule for `gpuspy import` and `gpuspy analyze`, which must agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuspy::importers {

// The number after "rank" (optionally "-" or "_" between) in the file's name, where "rank" starts
// the name or follows a non-letter; nullopt when the name says no rank.
std::optional<int32_t> RankInFileName(const std::string& path);

int32_t ImpliedRank(const std::string& path, size_t position);

// The files of one job are its ranks, one file each. Two that are the same rank (two single-process
// traces that both say rank 0) are two runs, not one job: nullopt when every rank is distinct,
// else one line naming both files and the way out.
struct RankedFile {
  std::string path;
  int32_t rank = 0;
};
std::optional<std::string> SameRankTwice(const std::vector<RankedFile>& files);

}  // namespace gpuspy::importers
