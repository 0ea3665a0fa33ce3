// The job name `import`, `analyze` and `diff` give trace files when --job is not given. One file:
// its name up to the first dot ("rank0.pt.trace.json.gz" -> "rank0"). Several files are the ranks
// of one job, so the name is what they share, not the first file's rank: the common start of their
// names less a trailing rank word and number ("llama_rank0.json", "llama_rank1.json" -> "llama"),
// else the directory they share ("runs/ddp_bf16/rank0.json", ... -> "ddp_bf16"), else the first
// name and how many more ("rank0+3").
#pragma once

#include <string>
#include <vector>

namespace gpuspy::cli {

std::string JobNameForFiles(const std::vector<std::string>& paths);

}  // namespace gpuspy::cli
