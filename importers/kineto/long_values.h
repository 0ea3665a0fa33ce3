// A trace whose text holds one enormous value (a kernel name of hundreds of MB) costs the JSON
// parser several times that value in memory before any name can be cut to kMaxStringBytes: a
// 2 GiB name peaked at 16.4 GB RSS in `gpuspy analyze` (simdjson's structural index is 4 bytes per
// byte of the largest document it parses, and a piece can be cut only between events). Such a
// file is refused before it is parsed, with the byte offset; names between kMaxStringBytes and
// this are read and cut (bounded_strings.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace gpuspy::importers {

// Text is looked at in blocks of this size; a block with no unescaped '"' lies inside one value,
// so any string of 2 x kMaxValueBlockBytes or more is found, and none under kMaxValueBlockBytes
// is. 8 MiB: about 40 MB of parser memory at most for the value, far above any real name
// (templated kernel names reach a few KB).
inline constexpr size_t kMaxValueBlockBytes = 8u << 20;

// The offset of the first block of `json` holding no unescaped '"' (nullopt: none). One memchr
// per block in ordinary text, which has a quote every few bytes.
std::optional<size_t> FindOverlongValue(std::string_view json,
                                        size_t block_bytes = kMaxValueBlockBytes);

// The same check over text that arrives a part at a time (a gzip file inflated as it is read,
// gzip_text_stream.h), holding none of it: the parts are fed in order, and a quote's escaping is
// told from the run of backslashes before it, across parts.
class OverlongValueScan {
 public:
  explicit OverlongValueScan(size_t block_bytes = kMaxValueBlockBytes) : block_bytes_(block_bytes) {}
  // The next part of the text; false once a whole block held no unescaped '"'.
  bool Feed(std::string_view more);
  // That block's offset, once one is found.
  std::optional<size_t> found() const { return found_; }

 private:
  const size_t block_bytes_;
  size_t fed_ = 0;            // bytes of text fed so far
  size_t block_end_ = 0;      // where the block being looked at ends (0: before the first)
  bool quoted_ = false;       // whether that block holds an unescaped '"' so far
  size_t backslashes_ = 0;    // the run of backslashes that ends the text fed so far
  std::optional<size_t> found_;
};

}  // namespace gpuspy::importers
