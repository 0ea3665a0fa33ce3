// The content hash `gpuspy import` stores with each imported process (ProcessIdentity.
// content_sha256): SHA-256 of the file's bytes as they lie on disk, compressed or not.
//
// Why the bytes on disk: "the same file" is what a repeated import repeats, and hashing them
// needs no decompression (a .gz is hashed at disk speed, ~1.5 GB/s with SHA-NI, while parsing it
// costs far more). A re-compressed copy of a trace therefore counts as another file. Why SHA-256
// rather than a faster 128-bit hash: a match makes the collector refuse data, and on a shared
// collector a crafted collision must not block someone's import; SHA-256 is never the bottleneck.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace gpuspy::cli {

// Lowercase hex, 64 digits.
absl::StatusOr<std::string> FileSha256Hex(const std::string& path);

}  // namespace gpuspy::cli
