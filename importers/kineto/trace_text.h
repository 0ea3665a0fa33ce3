// A trace's JSON text as the piece reader (kineto_reader.cc) walks it: front to back, a window of
// it in memory at a time. The text [0, end()) is known so far; the reader asks for more (Fill)
// and says what it is done with (Drop). Two kinds: text that is all in memory at once (a mapped
// or copied file, WholeText) and a gzip file inflated as it is read (gzip_text_stream.h), whose
// memory is the window, not the text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "importers/kineto/trace_bytes.h"

namespace gpuspy::importers {

class TraceText {
 public:
  virtual ~TraceText() = default;

  // Makes the text up to `until` readable, or all of it when it is shorter. False when it cannot
  // (the text does not read, or its window would grow past what a piece may need): the reader
  // then gives up, and the whole read says why.
  virtual bool Fill(size_t until) = 0;
  // How much of the text is readable: [0, end()), of which the part not dropped is in memory.
  virtual size_t end() const = 0;
  // Whether end() is the text's end.
  virtual bool complete() const = 0;
  // The text [from, to): not dropped (from at or past the last Drop) and filled (to <= end()).
  // Valid until the next Fill or Drop.
  virtual std::string_view View(size_t from, size_t to) const = 0;
  // Copies the text [offset, offset + n) to `to` (same conditions as View).
  virtual void CopyOut(size_t offset, size_t n, char* to) const = 0;
  // The reader is done with the text before `offset`.
  virtual void Drop(size_t offset) = 0;
  // The text's size for a progress line: exact when complete(), else what the file says it will
  // be (0: unknown).
  virtual uint64_t expected_size() const = 0;
};

// Text that is in memory whole (TraceBytes): every Fill succeeds at once.
class WholeText final : public TraceText {
 public:
  explicit WholeText(TraceBytes& bytes) : bytes_(bytes) {}

  bool Fill(size_t) override { return true; }
  size_t end() const override { return bytes_.json().size(); }
  bool complete() const override { return true; }
  std::string_view View(size_t from, size_t to) const override {
    return bytes_.json().substr(from, to - from);
  }
  void CopyOut(size_t offset, size_t n, char* to) const override { bytes_.CopyOut(offset, n, to); }
  void Drop(size_t offset) override { bytes_.ReleaseBefore(offset); }
  uint64_t expected_size() const override { return bytes_.json().size(); }

 private:
  TraceBytes& bytes_;
};

}  // namespace gpuspy::importers
