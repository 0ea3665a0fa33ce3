#include "analysis/thread_names.h"

#include <algorithm>
#include <cctype>

namespace gpuspy::analysis {
namespace {

// absl here predates std::string_view interop: the few string helpers are written out.
std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "thread 23695 (pt_pin_memory)" -> "pt_pin_memory": Kineto wraps the OS name (comm) so.
std::string_view OsName(std::string_view name) {
  if (name.starts_with("thread ") && name.ends_with(")")) {
    const size_t open = name.find(" (");
    if (open != std::string_view::npos) return name.substr(open + 2, name.size() - open - 3);
  }
  return name;
}

// "pt_data_worker_3" -> "3"; "" when the name does not end in a number.
std::string_view TrailingNumber(std::string_view name) {
  size_t i = name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
  return name.substr(i);
}

}  // namespace

std::string ThreadDisplayName(uint32_t tid, uint32_t pid, std::string_view trace_name) {
  if (pid != 0 && tid == pid) return "main thread";
  const std::string_view given = Trim(trace_name);
  const std::string_view os_name = OsName(given);
  std::string lower(os_name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto has = [&](std::string_view part) { return lower.find(part) != std::string::npos; };
  if (has("pt_data_worker") || has("dataloader worker") || has("dataloader_worker")) {
    const std::string_view n = TrailingNumber(os_name);
    return n.empty() ? "dataloader worker" : "dataloader worker " + std::string(n);
  }
  if (has("pin_memory") || has("pin memory")) return "pin-memory thread";
  if (!given.empty()) return std::string(given);
  return "thread " + std::to_string(tid);
}

}  // namespace gpuspy::analysis
