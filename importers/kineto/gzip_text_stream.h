// A gzip'd trace inflated as the piece reader walks it, into a window of a few MB instead of one
// buffer of the whole text (trace_bytes.h). ISA-L's streaming inflate (igzip): measured here at
// 1.8-3.2 GB/s of text into a window that stays in cache, against libdeflate's whole-buffer
// ~1 GB/s into fresh pages (and zlib's streaming ~0.55 GB/s), so streaming is both the smaller
// and the faster way (bench/results/offline-analyze-2026-12-08.md).
//
// Concatenated members are one text (gzip -c a b > c), as gzip -d reads them; bytes after the last
// member that do not start another are ignored, as the whole read ignores them. Every member's
// CRC-32 and size are checked as it ends.
//
// It only ever succeeds or gives up: a damaged member, a text over the size limit, a value too
// long to parse in bounded memory (long_values.h) or a window past its bound make Fill fail, and
// the caller reads the file whole, which says precisely what is wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "importers/kineto/long_values.h"
#include "importers/kineto/trace_text.h"

struct inflate_state;  // ISA-L's (isa-l/igzip_lib.h)

namespace gpuspy::importers {

// How much a Fill inflates at least, past what was asked: fewer, larger inflate calls.
inline constexpr size_t kInflateChunkBytes = size_t{1} << 20;
// The most text the window holds at once. A piece of traceEvents needs ~2 MB; a single event or
// root value too large for this makes the reader read the file whole instead.
inline constexpr size_t kMaxWindowBytes = size_t{64} << 20;

class GzipTextStream final : public TraceText {
 public:
  // nullptr when `path` is not a regular gzip file that can be opened and read (the whole read
  // says why). Fill fails once the text passes `max_json_bytes`.
  static std::unique_ptr<GzipTextStream> Open(const std::string& path, uint64_t max_json_bytes,
                                              size_t max_window_bytes = kMaxWindowBytes);
  ~GzipTextStream() override;
  GzipTextStream(const GzipTextStream&) = delete;
  GzipTextStream& operator=(const GzipTextStream&) = delete;

  bool Fill(size_t until) override;
  size_t end() const override { return end_; }
  bool complete() const override { return complete_; }
  // kPaddingBytes of zeros (or more text) follow any view.
  std::string_view View(size_t from, size_t to) const override {
    return {window_.get() + (from - base_), to - from};
  }
  void CopyOut(size_t offset, size_t n, char* to) const override;
  void Drop(size_t offset) override;
  // The last member's trailer size (mod 2^32) until the text is complete; then the text's size.
  uint64_t expected_size() const override;

  // Whether a Fill failed (every later one fails too).
  bool failed() const { return failed_; }
  uint64_t file_bytes() const { return file_bytes_; }
  int64_t inflate_ns() const { return inflate_ns_; }
  // The window's largest size so far (tests: memory is the window's, not the text's).
  size_t peak_window_bytes() const { return capacity_; }

 private:
  GzipTextStream() = default;
  // Room for `n` more bytes of text (and the padding) after end_: drops what was dropped, then grows.
  bool MakeRoom(size_t n);
  // Reads more of the file into the input buffer (keeping what is unread): false at its end.
  bool ReadInput();
  // After a member's end: whether another member follows (then the inflate is reset for it).
  bool NextMember();
  // Inflates up to kInflateChunkBytes more: false when the text does not inflate.
  bool InflateChunk();
  bool Fail() {
    failed_ = true;
    return false;
  }

  int fd_ = -1;
  uint64_t file_bytes_ = 0;
  uint64_t file_read_ = 0;  // of the file, into the input buffer so far
  uint64_t max_json_bytes_ = 0;
  size_t max_window_bytes_ = 0;
  uint32_t trailer_size_ = 0;

  std::unique_ptr<inflate_state> state_;
  std::unique_ptr<unsigned char[]> input_;
  size_t input_begin_ = 0;  // unread input: [input_begin_, input_end_)
  size_t input_end_ = 0;

  std::unique_ptr<char[]> window_;  // the text from base_ on
  size_t capacity_ = 0;
  size_t base_ = 0;     // the text offset of window_[0]
  size_t dropped_ = 0;  // the reader is done with the text before this
  size_t end_ = 0;
  OverlongValueScan values_;  // the whole read's value-length check, as the text comes
  bool complete_ = false;
  bool failed_ = false;
  int64_t inflate_ns_ = 0;
};

}  // namespace gpuspy::importers
