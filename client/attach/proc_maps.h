// What /proc/N/maps says about another process: which shared objects it loaded, and where.
// The attacher finds libc (for dlopen/dlsym) and gpuspy's own stub this way.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuspy::attach {

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string perms;  // "r-xp"
  uint64_t offset = 0;
  uint64_t inode = 0;
  std::string path;   // empty for anonymous memory; "[stack]" and the like for the kernel's
};

// Parses the text of /proc/N/maps; lines that do not parse are skipped (the kernel's format is
// stable, but a truncated read must not become a wrong address).
std::vector<Mapping> ParseMaps(std::string_view text);
absl::StatusOr<std::vector<Mapping>> ReadMaps(pid_t pid);

struct LoadedObject {
  std::string path;
  uint64_t base = 0;  // where its file offset 0 is mapped
  uint64_t text_start = 0, text_end = 0;  // its executable mapping(s), first to last
};

// The first loaded object whose file name (the path's last component) starts with `prefix`:
// "libc.so.6" finds /usr/lib/x86_64-linux-gnu/libc.so.6 (and an older "libc-2.31.so" with
// prefix "libc-"), "libcupti.so" any CUPTI.
std::optional<LoadedObject> FindObject(const std::vector<Mapping>& maps, std::string_view prefix);

// Whether `address` lies in an executable mapping of `object`.
bool InText(const LoadedObject& object, uint64_t address);

}  // namespace gpuspy::attach
