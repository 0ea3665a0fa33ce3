#include "client/attach/proc_maps.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpuspy::attach {
namespace {

bool ParseHex(absl::string_view s, uint64_t* out) {
  return absl::SimpleHexAtoi(s, out);
}

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::vector<Mapping> ParseMaps(std::string_view text) {
  std::vector<Mapping> out;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    // start-end perms offset dev inode [path]; the path may contain spaces and is the rest.
    std::vector<absl::string_view> f = absl::StrSplit(line, absl::MaxSplits(' ', 5));
    if (f.size() < 5) continue;
    Mapping m;
    const size_t dash = f[0].find('-');
    if (dash == absl::string_view::npos || !ParseHex(f[0].substr(0, dash), &m.start) ||
        !ParseHex(f[0].substr(dash + 1), &m.end) || !ParseHex(f[2], &m.offset) ||
        !absl::SimpleAtoi(f[4], &m.inode) || f[1].size() != 4 || m.end <= m.start) {
      continue;
    }
    m.perms = std::string(f[1]);
    if (f.size() == 6) m.path = std::string(absl::StripLeadingAsciiWhitespace(f[5]));
    out.push_back(std::move(m));
  }
  return out;
}

absl::StatusOr<std::vector<Mapping>> ReadMaps(pid_t pid) {
  const std::string path = absl::StrCat("/proc/", pid, "/maps");
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  std::string text;
  int err = fd < 0 ? errno : 0;
  if (fd >= 0) {
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) text.append(buf, static_cast<size_t>(n));
    if (n < 0) err = errno;
    close(fd);
  }
  // The kernel checks ptrace access on open or on the first read, depending on its version.
  if (err == EACCES || err == EPERM) {
    return absl::PermissionDeniedError(absl::StrCat("cannot read ", path, ": ", std::strerror(err)));
  }
  if (err != 0) return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(err)));
  return ParseMaps(text);
}

std::optional<LoadedObject> FindObject(const std::vector<Mapping>& maps, std::string_view prefix) {
  std::optional<LoadedObject> found;
  for (const Mapping& m : maps) {
    if (m.path.empty() || m.path[0] != '/') continue;
    if (found.has_value()) {
      if (m.path != found->path) continue;
    } else if (BaseName(m.path).substr(0, prefix.size()) != prefix) {
      continue;
    } else {
      found = LoadedObject{.path = m.path};
    }
    if (m.offset == 0 && found->base == 0) found->base = m.start;
    if (m.perms[2] == 'x') {
      if (found->text_start == 0) found->text_start = m.start;
      found->text_end = m.end;
    }
  }
  if (found.has_value() && found->base == 0) return std::nullopt;  // never saw its first page
  return found;
}

bool InText(const LoadedObject& object, uint64_t address) {
  return address >= object.text_start && address < object.text_end;
}

}  // namespace gpuspy::attach
