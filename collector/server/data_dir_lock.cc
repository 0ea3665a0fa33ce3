#include "collector/server/data_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "collector/storage/private_files.h"

namespace gpuspy::collector {

absl::StatusOr<int> LockDataDir(const std::string& data_dir) {
  if (absl::Status st = MakePrivateDirectory(data_dir); !st.ok()) return st;
  const std::string path = data_dir + "/gpuspyd.lock";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kPrivateFileMode);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("data dir ", data_dir, " is in use by another gpuspyd"));
  }
  return fd;
}

}  // namespace gpuspy::collector
