// A JSON document as simdjson's structural pass (stage 1) indexes it, and a cursor over its
// tokens: every structural character ({ } [ ] : ,) and the first byte of every scalar, with UTF-8
// checked and every string closed. The Kineto walk (kineto_walk.h) reads its few fields straight
// from this index. simdjson's On Demand API walks the same index, but its iterators re-check
// depth and state on every field; over a trace's ~60 tokens per event that was ~25% of a read
// (measured with perf on a 207 MB trace), where this cursor costs an index load and a byte
// compare per token.
//
// Only the grammar the walk needs is checked: an object's keys, colons and commas, an array's
// commas, true/false/null spelled right. Values the walk skips are skipped by bracket depth (as
// On Demand skips them) and numbers are kept as written, so neither is checked further.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "importers/kineto/json_start.h"
#include "simdjson.h"

namespace gpuspy::importers {

// What JsonTokens::Scalar and String hand back: a value's text, or that it is an object or array,
// or why there is none. 16 bytes, so it comes back in two registers: a string_view handed back
// through an out-parameter by the out-of-line call was written as two 8-byte halves and read back
// as one 16-byte load, a store-forwarding stall that perf put at a third of the walk's time.
class JsonScalar {
 public:
  static JsonScalar Text(std::string_view text) {
    return JsonScalar(text.data(), static_cast<uint32_t>(text.size()), simdjson::SUCCESS, false);
  }
  static JsonScalar Container() { return JsonScalar(nullptr, 0, simdjson::SUCCESS, true); }
  static JsonScalar Error(simdjson::error_code err) { return JsonScalar(nullptr, 0, err, false); }

  simdjson::error_code error() const { return static_cast<simdjson::error_code>(error_); }
  bool is_container() const { return container_; }
  std::string_view text() const { return {data_, size_}; }

 private:
  JsonScalar(const char* data, uint32_t size, simdjson::error_code err, bool container)
      : data_(data), size_(size), error_(static_cast<uint8_t>(err)), container_(container) {}

  const char* data_;
  uint32_t size_;  // documents are under 4 GiB (simdjson's offsets are 32-bit)
  uint8_t error_;  // simdjson's error codes number under 256
  bool container_;
};
static_assert(sizeof(JsonScalar) == 16, "returned in registers");

class JsonTokens {
 public:
  using error_code = simdjson::error_code;

  JsonTokens();
  ~JsonTokens();
  JsonTokens(const JsonTokens&) = delete;
  JsonTokens& operator=(const JsonTokens&) = delete;

  // Room for documents up to `bytes` long, allocated once (a piece reader's documents would
  // otherwise regrow it). Index() grows it when a document is longer.
  error_code Reserve(size_t bytes);
  // Indexes `len` bytes at `buf` (at least simdjson::SIMDJSON_PADDING readable bytes past them)
  // and puts the cursor on the first token. The text must outlive the walk.
  error_code Index(const char* buf, size_t len);

  bool AtEnd() const { return at_ >= count_; }
  // The first byte of the token at the cursor; '\0' past the last one.
  char Peek() const { return AtEnd() ? '\0' : buf_[index_[at_]]; }
  // Where the token at the cursor starts (the document's length past the last one).
  size_t Offset() const { return AtEnd() ? len_ : index_[at_]; }
  // Moves past the token at the cursor when it starts with `c`.
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++at_;
    return true;
  }

  // String and Scalar are inlined into the walk: a call per key and per value was ~20% of the
  // walk's time (--timings on the 207 MB trace: walk+map 1,350 -> 1,550 MB/s for Scalar, and
  // 1,590 -> 1,680 for String).
  //
  // The string at the cursor, unescaped, and the cursor past it. The text lives until the next
  // Index() (an escaped string is unescaped into a buffer of the document's size, like simdjson's).
  [[gnu::always_inline]] JsonScalar String();
  // The scalar at the cursor as the Kineto mapping wants it (strings unescaped, numbers as
  // written, "true"/"false", "" for null), the cursor past it. For an object or array,
  // is_container(), with the cursor still on it.
  [[gnu::always_inline]] JsonScalar Scalar();
  // Moves past one value: a scalar's token, or an object or array whole (by bracket depth).
  error_code Skip();

  // Calls `field(key)` for each field of the object at the cursor with the cursor on its value;
  // `field` must move the cursor past that value (or return an error). The cursor ends past '}'.
  template <typename F>
  error_code ForEachField(F&& field);
  // The same for each item of the array at the cursor: `item()` with the cursor on the item.
  template <typename F>
  error_code ForEachItem(F&& item);

 private:
  // The token at the cursor without the whitespace after it.
  std::string_view Token() const {
    const char* begin = buf_ + index_[at_];
    const char* end = buf_ + index_[at_ + 1];  // the next token, or the text's end after the last
    while (end > begin && IsJsonSpace(end[-1])) --end;
    return {begin, static_cast<size_t>(end - begin)};
  }
  JsonScalar Unescape(const char* text);
  // What ends a container where a ',' or its closing bracket should be.
  error_code MissingSeparator() const {
    return AtEnd() ? simdjson::INCOMPLETE_ARRAY_OR_OBJECT : simdjson::TAPE_ERROR;
  }

  std::unique_ptr<simdjson::internal::dom_parser_implementation> stage1_;
  const char* buf_ = nullptr;
  size_t len_ = 0;
  const uint32_t* index_ = nullptr;
  uint32_t count_ = 0;
  uint32_t at_ = 0;
  // Whether the document holds a backslash at all: when not (nearly every trace), no string is
  // looked at for escapes.
  bool has_escapes_ = false;
  // Unescaped strings of the current document, allocated at its first escape.
  std::unique_ptr<uint8_t[]> unescaped_;
  size_t unescaped_capacity_ = 0;
  size_t unescaped_used_ = 0;
};

template <typename F>
simdjson::error_code JsonTokens::ForEachField(F&& field) {
  if (!Consume('{')) return simdjson::INCORRECT_TYPE;
  if (Consume('}')) return simdjson::SUCCESS;
  while (true) {
    const JsonScalar key = String();
    if (key.error()) return key.error();
    if (!Consume(':')) return MissingSeparator();
    if (error_code err = field(key.text())) return err;
    if (Consume(',')) continue;
    if (Consume('}')) return simdjson::SUCCESS;
    return MissingSeparator();
  }
}

template <typename F>
simdjson::error_code JsonTokens::ForEachItem(F&& item) {
  if (!Consume('[')) return simdjson::INCORRECT_TYPE;
  if (Consume(']')) return simdjson::SUCCESS;
  while (true) {
    if (error_code err = item()) return err;
    if (Consume(',')) continue;
    if (Consume(']')) return simdjson::SUCCESS;
    return MissingSeparator();
  }
}

inline JsonScalar JsonTokens::String() {
  if (Peek() != '"') {
    return JsonScalar::Error(AtEnd() ? simdjson::INCOMPLETE_ARRAY_OR_OBJECT : simdjson::TAPE_ERROR);
  }
  const std::string_view token = Token();
  // Stage 1 closed every string, so the token ends at its closing quote unless something
  // follows it before the next structural character ("abc"x): then the grammar is broken.
  if (token.size() < 2 || token.back() != '"') return JsonScalar::Error(simdjson::TAPE_ERROR);
  const std::string_view text = token.substr(1, token.size() - 2);
  if (has_escapes_ && text.find('\\') != std::string_view::npos) return Unescape(text.data());
  ++at_;
  return JsonScalar::Text(text);
}

inline JsonScalar JsonTokens::Scalar() {
  std::string_view text;
  switch (Peek()) {
    case '"':
      return String();
    case '{':
    case '[':
      return JsonScalar::Container();
    case 't':
      if (Token() != "true") return JsonScalar::Error(simdjson::T_ATOM_ERROR);
      text = "true";
      break;
    case 'f':
      if (Token() != "false") return JsonScalar::Error(simdjson::F_ATOM_ERROR);
      text = "false";
      break;
    case 'n':
      if (Token() != "null") return JsonScalar::Error(simdjson::N_ATOM_ERROR);
      break;
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      // As written: "1695835572943613.592" µs keeps its ns digits (a double would round them).
      text = Token();
      break;
    default:
      return JsonScalar::Error(AtEnd() ? simdjson::INCOMPLETE_ARRAY_OR_OBJECT : simdjson::TAPE_ERROR);
  }
  ++at_;
  return JsonScalar::Text(text);
}

}  // namespace gpuspy::importers
