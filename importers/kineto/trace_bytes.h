// A trace file's JSON text in memory, laid out for simdjson (which reads up to 64 bytes past the
// end): plain files are mmap'd, not copied; gzip files are inflated by libdeflate in one pass into
// one anonymous mapping of the inflated size, learnt first (gzip_size.h: the trailer where it must
// be exact, else a count in bounded memory), so pages the reader is done with can be handed back
// one by one and a file over the limit is refused before any of it is inflated. The text itself
// is libdeflate's: zlib's streaming inflate measured ~300 MB/s here and libdeflate about twice
// that, and a whole-buffer inflate is what a whole-document parser needs. A gzip file read in
// pieces is not inflated here but as it is read (gzip_text_stream.h); this whole read is the
// reference it falls back to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "importers/kineto/huge_pages.h"  // kHugePageBytes: inflated text is handed back in these

namespace gpuspy::importers {

// simdjson's SIMDJSON_PADDING, without its header here.
inline constexpr size_t kPaddingBytes = 64;
// simdjson indexes documents of up to 4 GiB (32-bit offsets).
inline constexpr uint64_t kMaxTraceBytes = 0xFFFFFFFFull - kPaddingBytes;
// The default bound on a trace's JSON text (`--max-trace-bytes`): inflating a gzip bomb (10 GB of
// zeros in 10 MB) stops here instead of at kMaxTraceBytes (4.1 GB RSS before the error, issue 34).
// The largest real traces seen inflate to a few hundred MB; 2 GiB leaves room for them.
inline constexpr uint64_t kDefaultMaxJsonBytes = uint64_t{2} << 30;

class TraceBytes {
 public:
  // NotFound (cannot open), DataLoss (truncated or corrupt gzip, naming the compressed byte
  // offset), ResourceExhausted (more than kMaxTraceBytes uncompressed). A plain file is faulted
  // in whole up front (one bulk fault instead of one per page) when `populate`; a reader that
  // goes piece by piece passes false and copies each piece out (CopyOut) instead.
  // `max_json_bytes` (at most kMaxTraceBytes) bounds the text: a plain file's size, and what a
  // gzip file may inflate to: a gzip file over it is refused before its text is inflated, in
  // bounded memory (gzip_size.h).
  static absl::StatusOr<TraceBytes> Read(const std::string& path, bool populate = true,
                                         uint64_t max_json_bytes = kDefaultMaxJsonBytes);
  // A copy of `json` with the padding the parser needs (tests, fuzzing).
  static TraceBytes Copy(std::string_view json);

  TraceBytes(TraceBytes&& other) noexcept;
  TraceBytes& operator=(TraceBytes&& other) noexcept;
  TraceBytes(const TraceBytes&) = delete;
  TraceBytes& operator=(const TraceBytes&) = delete;
  ~TraceBytes();

  // The JSON text; at least kPaddingBytes readable bytes follow it.
  std::string_view json() const { return {data_, size_}; }
  // Hands the pages wholly before json()[offset] back to the system (the reader is done with
  // them): a mapped file's are dropped (read again from the file if touched), inflated text's are
  // discarded (they read as zeros after; whole huge pages only, see the definition). A no-op for
  // a Copy. Any thread that reads the text must be past `offset` for good.
  void ReleaseBefore(size_t offset);
  // Copies json()[offset, offset + n) to `to`. A plain file's text is read from the file
  // (pread), not through its mapping: the kernel copies out of the page cache through its own
  // huge-page view of memory, where reading this process's 4 KiB mapping of the same pages cost
  // ~4x more on a VM, in TLB misses (bench/results/offline-analyze-2026-12-07.md). Inflated or
  // copied text is memcpy'd. `offset + n` must be at most json().size().
  void CopyOut(size_t offset, size_t n, char* to) const;
  // Whether ReleaseBefore discarded any inflated text (the text is no longer whole: read the file
  // again to parse it again).
  bool lost_text() const { return lost_text_; }
  uint64_t file_bytes() const { return file_bytes_; }
  bool gzipped() const { return gzipped_; }
  int64_t inflate_ns() const { return inflate_ns_; }

 private:
  TraceBytes() = default;
  void Release();

  char* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_bytes_ = 0;  // > 0: data_ is an mmap of this many bytes, else malloc'd
  int fd_ = -1;              // a plain file's, open while it is mapped (CopyOut)
  size_t released_ = 0;      // bytes from data_ handed back by ReleaseBefore
  // Whether CopyOut read any of a plain file's text through its mapping (pread fell short).
  mutable bool read_through_mapping_ = false;
  bool lost_text_ = false;
  uint64_t file_bytes_ = 0;
  bool gzipped_ = false;
  int64_t inflate_ns_ = 0;
};

}  // namespace gpuspy::importers
