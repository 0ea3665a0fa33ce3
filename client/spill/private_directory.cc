#include "client/spill/private_directory.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace gpuspy::inject {
namespace {

bool AncestorIsSafe(const struct stat& st, uid_t uid) {
  if (st.st_uid == 0 || st.st_uid == uid) return true;
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) == 0) return true;
  return (st.st_mode & S_ISVTX) != 0;  // others may create entries but not rename ours
}

}  // namespace

absl::Status EnsurePrivateDirectory(const std::string& dir) {
  const uid_t uid = geteuid();
  std::error_code ec;
  const std::filesystem::path path = std::filesystem::absolute(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot resolve ", dir, ": ", ec.message()));
  // umask decides the mode of the parents we create; the directory itself is tightened below.
  std::filesystem::create_directories(path, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir, ": ", ec.message()));

  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot stat ", dir, ": ", std::strerror(errno)));
  }
  // A symlink is followed only when we own it: one planted by someone else is refused as theirs.
  if (S_ISLNK(st.st_mode) && st.st_uid == uid && stat(path.c_str(), &st) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot stat ", dir, ": ", std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != uid) {
    return absl::PermissionDeniedError(absl::StrCat(
        dir, " is not a directory of uid ", uid, " (owner uid ", st.st_uid,
        "): another user could read or redirect the spilled profile; remove it or set "
        "GPUSPY_SPILL_DIR"));
  }
  if ((st.st_mode & 0777) != 0700 && chmod(path.c_str(), 0700) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot chmod 0700 ", dir, ": ", std::strerror(errno)));
  }
  for (std::filesystem::path p = path.parent_path(); ; p = p.parent_path()) {
    if (stat(p.c_str(), &st) != 0) {
      return absl::UnavailableError(absl::StrCat("cannot stat ", p.string(), ": ", std::strerror(errno)));
    }
    if (!AncestorIsSafe(st, uid)) {
      return absl::PermissionDeniedError(absl::StrCat(
          p.string(), " (an ancestor of ", dir, ") belongs to uid ", st.st_uid,
          " and is writable by others without the sticky bit: the spilled profile would not be "
          "private; set GPUSPY_SPILL_DIR elsewhere"));
    }
    if (p == p.root_path() || p.parent_path() == p) break;
  }
  return absl::OkStatus();
}

}  // namespace gpuspy::inject
