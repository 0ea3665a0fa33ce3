#include "viewer/cli/run_spec.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace gpuspy::cli {
namespace {

bool Exists(const std::string& path) {
  std::error_code ec;
  return !path.empty() && std::filesystem::exists(path, ec);
}

}  // namespace

absl::StatusOr<RunSpec> ParseRunSpec(const std::string& text) {
  RunSpec s;
  s.text = text;
  if (text.empty()) return absl::InvalidArgumentError("an empty run: give trace files or a job id");
  // A file whose name has '@' or ':' is that file.
  if (Exists(text)) {
    s.selector.base = text;
    s.is_path = true;
    return s;
  }
  absl::StatusOr<analysis::RunSelector> selector = analysis::ParseRunSelector(text);
  if (!selector.ok()) return selector.status();
  s.selector = *std::move(selector);
  const std::string& base = s.selector.base;
  s.is_path = Exists(base);
  // Something that looks like a file but is not there is a typo, not a job id.
  if (!s.is_path && (absl::StrContains(base, '/') || absl::EndsWith(base, ".json") ||
                     absl::EndsWith(base, ".gz"))) {
    return absl::NotFoundError(absl::StrCat(base, ": no such file or directory"));
  }
  return s;
}

absl::StatusOr<std::vector<std::string>> TraceFilesOf(const RunSpec& spec) {
  const std::string& base = spec.selector.base;
  std::error_code ec;
  if (!std::filesystem::is_directory(base, ec)) return std::vector<std::string>{base};
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(base, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file(ec) &&
        (absl::EndsWith(name, ".json") || absl::EndsWith(name, ".json.gz"))) {
      files.push_back(entry.path().string());
    }
  }
  if (ec) return absl::InternalError(absl::StrCat(base, ": ", ec.message()));
  if (files.empty()) {
    return absl::NotFoundError(absl::StrCat(base, ": no trace files (*.json, *.json.gz) in it"));
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace gpuspy::cli
