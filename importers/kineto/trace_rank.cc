#include "importers/kineto/trace_rank.h"

#include <cctype>
#include <limits>
#include <map>

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

std::optional<std::string> SameRankTwice(const std::vector<RankedFile>& files) {
  std::map<int32_t, const RankedFile*> first;
  for (const RankedFile& f : files) {
    auto [it, fresh] = first.emplace(f.rank, &f);
    if (fresh) continue;
    return it->second->path + " and " + f.path + " are both rank " + std::to_string(f.rank) +
           ": the files of one job are its ranks, one each (two separate runs are two jobs: give "
           "each its own --job)";
  }
  return std::nullopt;
}

}  // namespace gpuspy::importers
