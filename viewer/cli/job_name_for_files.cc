#include "viewer/cli/job_name_for_files.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace gpuspy::cli {
namespace {

namespace fs = std::filesystem;

// Words that name one process of a job rather than the job: what a shared prefix ends in when
// the files differ only by their rank ("trace_rank0", "trace_rank1" share "trace_rank").
constexpr std::array<std::string_view, 9> kRankWords = {"rank", "worker", "gpu", "node", "host",
                                                        "proc", "process", "device", "local"};

std::string Stem(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  return name.substr(0, name.find('.'));
}

bool IsSeparator(char c) { return c == '_' || c == '-' || c == '.' || c == '@' || c == ' '; }

// "llama_rank" -> "llama", "job_worker1" -> "job": trailing separators, and a rank word with the
// digits after it, repeatedly. Digits after anything else stay ("gpt2_" -> "gpt2").
std::string TrimRankSuffix(std::string s) {
  for (bool changed = true; changed && !s.empty();) {
    changed = false;
    while (!s.empty() && IsSeparator(s.back())) {
      s.pop_back();
      changed = true;
    }
    size_t digits = s.size();
    while (digits > 0 && absl::ascii_isdigit(s[digits - 1])) --digits;
    const std::string lower = absl::AsciiStrToLower(s.substr(0, digits));
    for (std::string_view w : kRankWords) {
      if (lower.size() >= w.size() && std::string_view(lower).substr(lower.size() - w.size()) == w) {
        s.resize(digits - w.size());
        changed = true;
        break;
      }
    }
  }
  return s;
}

std::string CommonPrefix(const std::vector<std::string>& names) {
  std::string prefix = names.front();
  for (const std::string& n : names) {
    const auto [p, q] = std::mismatch(prefix.begin(), prefix.end(), n.begin(), n.end());
    prefix.erase(p, prefix.end());
  }
  return prefix;
}

// The directory every file is in, by name; "" when they differ or it has no name ("/").
std::string SharedDirectory(const std::vector<std::string>& paths) {
  std::error_code ec;
  const fs::path first = fs::absolute(fs::path(paths.front()), ec).parent_path();
  if (ec) return "";
  for (const std::string& p : paths) {
    if (fs::absolute(fs::path(p), ec).parent_path() != first || ec) return "";
  }
  return first.filename().string();
}

}  // namespace

std::string JobNameForFiles(const std::vector<std::string>& paths) {
  if (paths.empty()) return "";
  if (paths.size() == 1) return Stem(paths.front());
  std::vector<std::string> stems;
  for (const std::string& p : paths) stems.push_back(Stem(p));
  std::string shared = TrimRankSuffix(CommonPrefix(stems));
  if (!shared.empty()) return shared;
  shared = TrimRankSuffix(SharedDirectory(paths));
  if (!shared.empty()) return shared;
  return absl::StrCat(stems.front(), "+", paths.size() - 1);
}

}  // namespace gpuspy::cli
