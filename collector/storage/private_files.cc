#include "collector/storage/private_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace gpuspy::collector {

absl::Status MakePrivateDirectory(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  if (chmod(dir.c_str(), kPrivateDirMode) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot chmod ", dir, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status MakePrivateFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, kPrivateFileMode);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  const int rc = fchmod(fd, kPrivateFileMode);
  const int err = errno;
  close(fd);
  if (rc != 0) return absl::UnavailableError(absl::StrCat("cannot chmod ", path, ": ", std::strerror(err)));
  return absl::OkStatus();
}

absl::Status MakeFilesPrivate(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec) || entry.is_symlink(ec)) continue;
    if (chmod(entry.path().c_str(), kPrivateFileMode) != 0) {
      return absl::UnavailableError(absl::StrCat("cannot chmod ", entry.path().string(), ": ", std::strerror(errno)));
    }
  }
  if (ec) return absl::UnavailableError(absl::StrCat("cannot list ", dir, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace gpuspy::collector
