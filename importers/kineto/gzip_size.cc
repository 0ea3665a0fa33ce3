#include "importers/kineto/gzip_size.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>

namespace gpuspy::importers {
namespace {

// Deflate's largest expansion: a 258-byte match costs at least 2 bits, about 1032:1.
constexpr uint64_t kDeflateMaxExpansion = 1032;
// What trace JSON inflates to, at most, per compressed byte: profiler traces compress 8-20x
// (shared/traces: 9.6-14x; the generated 207 MB trace 11x). A larger claim is a count's to check.
constexpr uint64_t kPlausibleTraceExpansion = 64;
// The smallest member: 10-byte header, an empty final block (2 bytes), 8-byte trailer.
constexpr size_t kMinMemberBytes = 20;
// Counting writes here and forgets it: big enough that zlib's fast loop runs, small enough to
// stay in cache.
constexpr size_t kCountBufferBytes = 64 << 10;

// The trailer's ISIZE, when `gz` is one member (no other member header anywhere in the file).
std::optional<uint32_t> SingleMemberTrailer(std::span<const unsigned char> gz) {
  if (gz.size() < kMinMemberBytes) return std::nullopt;
  // A second member starts with ID1 ID2 CM=8 and a flags byte with its reserved bits clear (what
  // libdeflate accepts). Any such bytes past the first header, even inside deflate data, make the
  // file "maybe several members": a false alarm only costs a count.
  const std::string_view text(reinterpret_cast<const char*>(gz.data()), gz.size());
  for (size_t at = text.find("\x1f\x8b\x08", 1); at != std::string_view::npos;
       at = text.find("\x1f\x8b\x08", at + 1)) {
    if (at + 3 < text.size() && (static_cast<unsigned char>(text[at + 3]) & 0xE0) == 0) return std::nullopt;
  }
  uint32_t isize = 0;
  std::memcpy(&isize, gz.data() + gz.size() - 4, 4);
  return isize;
}

}  // namespace

bool IsGzip(std::span<const unsigned char> p) {
  return p.size() >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

std::optional<uint64_t> ExactTrailerSize(std::span<const unsigned char> gz) {
  if (gz.size() * kDeflateMaxExpansion >= (uint64_t{1} << 32)) return std::nullopt;
  const std::optional<uint32_t> isize = SingleMemberTrailer(gz);
  // A claim deflate cannot produce from this many bytes is damage (the fuzzer's 2 KB file
  // claiming 3.5 GB): counted, then refused as such.
  if (!isize || *isize > gz.size() * kDeflateMaxExpansion) return std::nullopt;
  return *isize;
}

std::optional<uint64_t> PlausibleTrailerSize(std::span<const unsigned char> gz) {
  const std::optional<uint32_t> isize = SingleMemberTrailer(gz);
  if (!isize || *isize < gz.size() || *isize > gz.size() * kPlausibleTraceExpansion) return std::nullopt;
  return *isize;
}

InflatedCount CountInflatedBytes(std::span<const unsigned char> gz, uint64_t limit_bytes) {
  InflatedCount out;
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {  // gzip wrapper only
    out.damaged = true;
    return out;
  }
  // No CRC-32 or ISIZE check here: libdeflate checks both when it inflates the text next, and
  // skipping them makes the count ~10% faster (0.33 -> 0.29 s for 207 MB of JSON).
  inflateValidate(&z, 0);
  std::unique_ptr<unsigned char[]> buffer(new unsigned char[kCountBufferBytes]);
  size_t in_off = 0;
  while (in_off < gz.size() && IsGzip(gz.subspan(in_off))) {
    out.member_offset = in_off;
    inflateReset(&z);
    size_t fed = in_off;  // input handed to zlib so far (avail_in is 32-bit: fed in slices)
    int ret = Z_OK;
    while (ret == Z_OK) {
      if (z.avail_in == 0 && fed < gz.size()) {
        const size_t slice = std::min<size_t>(gz.size() - fed, size_t{1} << 30);
        z.next_in = const_cast<unsigned char*>(gz.data() + fed);
        z.avail_in = static_cast<uInt>(slice);
        fed += slice;
      }
      z.next_out = buffer.get();
      z.avail_out = kCountBufferBytes;
      ret = inflate(&z, Z_NO_FLUSH);
      out.bytes += kCountBufferBytes - z.avail_out;
      if (out.bytes > limit_bytes) {
        out.over_limit = true;
        inflateEnd(&z);
        return out;
      }
      // Out of input before the member's end: truncated.
      if (ret == Z_BUF_ERROR && z.avail_in == 0 && fed == gz.size()) break;
      if (ret == Z_BUF_ERROR) ret = Z_OK;  // no progress possible this call only
    }
    if (ret != Z_STREAM_END) {
      out.damaged = true;
      inflateEnd(&z);
      return out;
    }
    in_off = fed - z.avail_in;
    z.avail_in = 0;
  }
  inflateEnd(&z);
  return out;
}

std::string InflatedHead(std::span<const unsigned char> gz, size_t max_bytes) {
  std::string head(max_bytes, '\0');
  z_stream z{};
  if (max_bytes == 0 || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return {};
  // The first member's start is all a head needs (a member holds far more than a head).
  z.next_in = const_cast<unsigned char*>(gz.data());
  z.avail_in = static_cast<uInt>(std::min<size_t>(gz.size(), size_t{1} << 30));
  z.next_out = reinterpret_cast<unsigned char*>(head.data());
  z.avail_out = static_cast<uInt>(max_bytes);
  int ret = Z_OK;
  while (ret == Z_OK && z.avail_out > 0) ret = inflate(&z, Z_NO_FLUSH);
  head.resize(max_bytes - z.avail_out);
  inflateEnd(&z);
  return head;
}

}  // namespace gpuspy::importers
