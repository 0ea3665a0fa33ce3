// Compression of stored batch payloads (zstd). The wire form is already compact (packed varints,
// deltas, a dictionary), so the producer never runs a general-purpose compressor; the collector
// does, at rest, where a core is cheaper than a week of disk.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace gpuspy::collector {

// zstd level 3: ~400 MB/s per core, a good ratio on columnar varints.
inline constexpr int kPayloadZstdLevel = 3;

std::string CompressPayload(const std::string& raw, int level = kPayloadZstdLevel);
// DataLoss for anything that is not one complete zstd frame of at most `max_bytes`.
absl::StatusOr<std::string> DecompressPayload(const std::string& compressed, size_t max_bytes);

}  // namespace gpuspy::collector
