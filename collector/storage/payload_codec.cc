#include "collector/storage/payload_codec.h"

#include <zstd.h>

#include "absl/strings/str_cat.h"

namespace gpuspy::collector {

std::string CompressPayload(const std::string& raw, int level) {
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), level);
  if (ZSTD_isError(n)) return std::string();  // callers store the raw bytes instead
  out.resize(n);
  return out;
}

absl::StatusOr<std::string> DecompressPayload(const std::string& compressed, size_t max_bytes) {
  const unsigned long long size = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
    return absl::DataLossError("stored payload is not a zstd frame");
  }
  if (size > max_bytes) {
    return absl::DataLossError(absl::StrCat("stored payload claims ", size, " bytes (limit ", max_bytes, ")"));
  }
  std::string out(static_cast<size_t>(size), '\0');
  const size_t n = ZSTD_decompress(out.data(), out.size(), compressed.data(), compressed.size());
  if (ZSTD_isError(n) || n != size) {
    return absl::DataLossError(absl::StrCat("stored payload does not decompress: ",
                                            ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short frame"));
  }
  return out;
}

}  // namespace gpuspy::collector
