#include "inject/core/attach_config.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpuspy::inject {

std::string AttachResultPath(const std::string& settings_path) { return settings_path + ".result"; }

absl::StatusOr<AttachSettings> AttachSettings::Read(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read the attach settings ", path));
  AttachSettings s;
  s.result_path_ = AttachResultPath(path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    s.values_[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return s;
}

EnvLookup AttachSettings::Overlay() const {
  return [values = values_](const char* name) -> std::string {
    if (auto it = values.find(name); it != values.end()) return it->second;
    return RealEnv(name);
  };
}

void WriteAttachResult(const std::string& result_path, std::initializer_list<std::string> fields) {
  if (result_path.empty()) return;
  const std::string tmp = result_path + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  std::string line = absl::StrJoin(fields, "\t");
  for (char& c : line) {
    if (c == '\n') c = ' ';  // one line, whatever a message holds
  }
  line.push_back('\n');
  const bool ok = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  close(fd);
  if (ok) std::rename(tmp.c_str(), result_path.c_str());
}

}  // namespace gpuspy::inject
