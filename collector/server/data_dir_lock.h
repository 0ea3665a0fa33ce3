// One gpuspyd per data dir: two writers would interleave segment files and corrupt the index.
// Taken by the daemon and by --rebuild-index.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace gpuspy::collector {

// Creates the data dir (private: private_files.h) and flocks <data_dir>/gpuspyd.lock; the fd
// holds the lock until closed. FailedPrecondition when another process holds it.
absl::StatusOr<int> LockDataDir(const std::string& data_dir);

}  // namespace gpuspy::collector
