// The spill directory holds a process's undelivered profile. Its default lives under /tmp, where
// another user can create /tmp/gpuspy-<uid> first and read (or, with a symlink, redirect) what we
// write there. Before anything is written, the directory must be provably ours.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace gpuspy::inject {

// Creates `dir` (and missing parents) if needed, then checks that no other non-root user can read
// or replace what goes in it:
//   - `dir` itself is a directory owned by the effective uid; its mode is set to 0700;
//   - every ancestor is owned by root or by us, or is not writable by group/others, or is sticky
//     (like /tmp): otherwise its owner could rename `dir` away and put their own in its place.
// PermissionDenied (with the offending path and owner) when a check fails, Unavailable when the
// directory cannot be created.
absl::Status EnsurePrivateDirectory(const std::string& dir);

}  // namespace gpuspy::inject
