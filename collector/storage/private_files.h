// The data dir holds every job's events and the index; only gpuspyd's uid may read it, whatever
// the umask it was started under (the systemd unit sets UMask=0077; the binary run by hand and
// the k8s manifests do not, and under umask 022 another uid read segments and index directly,
// around the per-uid query checks).
#pragma once

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"

namespace gpuspy::collector {

inline constexpr mode_t kPrivateDirMode = 0700;
inline constexpr mode_t kPrivateFileMode = 0600;

// Creates `dir` (and missing parents) and makes `dir` itself kPrivateDirMode, also when it
// already existed (a data dir made by an older gpuspyd is tightened). Parents keep their mode.
absl::Status MakePrivateDirectory(const std::string& dir);

// Creates `path` empty if missing, and makes it kPrivateFileMode.
absl::Status MakePrivateFile(const std::string& path);

// Makes every regular file directly in `dir` kPrivateFileMode: what an older gpuspyd, or a copy
// made by hand, left readable (the sealed segments, which nothing opens for writing again).
absl::Status MakeFilesPrivate(const std::string& dir);

}  // namespace gpuspy::collector
