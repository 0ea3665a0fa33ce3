// Reading a trace's text: as one document, or piece by piece for large ones (each indexed in one
// SIMD pass by simdjson's stage 1, then walked in place over that index, no DOM: json_tokens.h,
// kineto_walk.h). Strings come back as views into the text, numbers as their text, so an event
// costs no allocation.
#include "importers/kineto/kineto_reader.h"

#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "importers/kineto/bounded_strings.h"
#include "importers/kineto/gzip_text_stream.h"
#include "importers/kineto/huge_pages.h"
#include "importers/kineto/json_start.h"
#include "importers/kineto/json_tokens.h"
#include "importers/kineto/kineto_mapping.h"
#include "importers/kineto/kineto_walk.h"
#include "importers/kineto/long_values.h"
#include "importers/kineto/steady_now.h"
#include "importers/kineto/trace_bytes.h"
#include "importers/kineto/trace_text.h"
#include "simdjson.h"

namespace gpuspy::importers {
namespace {

using simdjson::error_code;

// Where the walk stopped, for the error message: 1-based, the byte of the token it could not
// take (the document's length when it ran out of tokens).
uint64_t ErrorByte(const JsonTokens& tokens) {
  return tokens.AtEnd() ? tokens.Offset() : tokens.Offset() + 1;
}

// A trace before its events: rank and local rank unknown until distributedInfo says.
// `reuse` (may be null): columns whose capacity the trace's events take over.
KinetoTrace NewTrace(EventColumns* reuse) {
  KinetoTrace out;
  if (reuse != nullptr) {
    out.events = std::move(*reuse);
    out.events.ClearKeepingCapacity();
  }
  out.identity.set_rank(-1);
  out.identity.set_local_rank(-1);
  return out;
}

absl::StatusOr<KinetoTrace> ParseWhole(std::string_view json, KinetoReadTimings* timings,
                                       EventColumns* reuse) {
  if (absl::Status st = CheckStartsLikeJson(json); !st.ok()) return st;
  const int64_t t0 = SteadyNowNs();
  KinetoTrace out = NewTrace(reuse);
  JsonTokens tokens;
  auto fail = [&](error_code err, uint64_t byte) {
    return absl::InvalidArgumentError(absl::StrCat("not valid trace JSON at byte ", byte, ": ",
                                                   simdjson::error_message(err)));
  };
  if (error_code err = tokens.Index(json.data(), json.size())) {
    if (err == simdjson::MEMALLOC) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "cannot allocate the parser's index for ", json.size(), " bytes of JSON"));
    }
    // The structural pass found no place to blame (an unclosed string, bad UTF-8).
    return fail(err, json.size());
  }
  const int64_t t1 = SteadyNowNs();
  KinetoMapper mapper(&out);
  if (tokens.Peek() == '{') {  // a root array is JSON, but no trace: said below
    KinetoWalk walk(&out, &mapper);
    if (error_code err = walk.Root(tokens)) return fail(err, ErrorByte(tokens));
    if (!tokens.AtEnd()) return fail(simdjson::TRAILING_CONTENT, ErrorByte(tokens));
  }
  if (out.stats.trace_events == 0) {
    return absl::InvalidArgumentError("no traceEvents: not a PyTorch profiler (Kineto) trace");
  }
  const int64_t t2 = SteadyNowNs();
  mapper.Finish();
  if (timings != nullptr) {
    timings->index_ns = t1 - t0;
    timings->walk_ns = t2 - t1;
    timings->finish_ns = SteadyNowNs() - t2;
  }
  return out;
}

// --- Reading in pieces -----------------------------------------------------------------------
//
// simdjson's structural pass indexes a whole document before the walk can start. So a large trace
// is cut into documents of its own, each one indexed and walked as the whole would be:
//   head:   the text up to traceEvents' '['     + "]}"   (the keys before traceEvents)
//   pieces: '[' + entries i..j of traceEvents   + "]"    (about piece_bytes each)
//   tail:   "{\"traceEvents\":[" + the rest of the text (the last entries and the keys after)
// A cut goes before a '{' that follows "}," (NextBoundary): a candidate only, since that text may
// sit inside a string or a nested array. The parse is the judge: a piece ending at a candidate
// parses as an array only if the candidate is a real boundary between entries (ending inside a
// string leaves it unclosed for the structural pass; inside a nested value leaves brackets open
// for the walk), and then the next
// candidate is tried (PieceReader::Piece). Whatever fails (no traceEvents key at the top, no boundary found, an
// invalid head or tail) is read again as one document, so errors and results are the whole
// read's.

constexpr int kMaxCandidatesPerPiece = 64;
// How far past its size a piece usually runs to the next boundary: an entry or a few.
constexpr size_t kPieceOvershootBytes = 1 << 20;
// How much of a text read as it comes is searched for traceEvents (PieceReader::EntriesStart).
constexpr size_t kMostHeadBytes = 4 << 20;

// The next candidate boundary at or after `from` (npos: none).
size_t NextBoundary(std::string_view json, size_t from) {
  while (from < json.size()) {
    const void* close = std::memchr(json.data() + from, '}', json.size() - from);
    if (close == nullptr) return std::string_view::npos;
    size_t i = static_cast<size_t>(static_cast<const char*>(close) - json.data()) + 1;
    from = i;
    while (i < json.size() && IsJsonSpace(json[i])) ++i;
    if (i >= json.size() || json[i] != ',') continue;
    ++i;
    while (i < json.size() && IsJsonSpace(json[i])) ++i;
    if (i < json.size() && json[i] == '{') return i;
  }
  return std::string_view::npos;
}

// Where traceEvents' entries start: just past the '[' of the text's first "traceEvents" key that
// opens an array (npos: none). The head's parse checks that it is the root's.
size_t TraceEventsStart(std::string_view json) {
  constexpr std::string_view kKey = "\"traceEvents\"";
  for (size_t at = json.find(kKey); at != std::string_view::npos; at = json.find(kKey, at + 1)) {
    size_t i = at + kKey.size();
    while (i < json.size() && IsJsonSpace(json[i])) ++i;
    if (i >= json.size() || json[i] != ':') continue;
    ++i;
    while (i < json.size() && IsJsonSpace(json[i])) ++i;
    if (i < json.size() && json[i] == '[') return i + 1;
  }
  return std::string_view::npos;
}

// The big columns reserved for as many events as `bytes` of text can plausibly hold, so that they
// never grow by copying: growth was ~9% of a read, in page faults and copies. Address space, not
// memory: a page is touched only when events fill it. A trace of smaller entries than this grows
// past the reservation as before.
constexpr size_t kLeastBytesPerEvent = 256;  // Kineto's X entries run 250-600 bytes with their args
void ReserveForText(size_t bytes, EventColumns* ev) {
  const size_t most = bytes / kLeastBytesPerEvent;
  try {
    ev->kernels.reserve(most);
    ev->apis.reserve(most);
    ev->nvtx_ranges.reserve(most);
  } catch (const std::bad_alloc&) {
    // A hint only (an address-space limit, say): the columns grow as events come.
  }
  // Faulted in 2 MiB at a time as they fill: 4 KiB faults and TLB misses in these columns cost
  // a 207 MB trace ~0.09 s.
  AdviseHugePagesFor(ev->kernels);
  AdviseHugePagesFor(ev->apis);
  AdviseHugePagesFor(ev->nvtx_ranges);
}

class PieceReader {
 public:
  // `progress(offset)`: the reader is done with the text before `offset`.
  PieceReader(TraceText& text, size_t piece_bytes, const std::function<void(size_t)>& progress)
      : text_(text), piece_bytes_(piece_bytes), progress_(progress) {
    // Room for a piece and the entry it runs into, once: grown piece by piece (reallocated for
    // each document longer than any before), the index was faulted in afresh about ten times
    // per trace.
    const size_t room = std::min<uint64_t>(text.expected_size(), piece_bytes + kPieceOvershootBytes);
    buffer_.reserve(room + 2 + kPaddingBytes);
    // Should it fail, Index() allocates what each document needs.
    (void)tokens_.Reserve(room);
  }

  // False when the text cannot be read in pieces (then nothing of `out` is to be used).
  bool Read(KinetoTrace* out, KinetoReadTimings* timings) {
    const std::optional<size_t> start = EntriesStart();
    if (!start) return false;
    ReserveForText(text_.expected_size(), &out->events);
    KinetoMapper mapper(out);
    KinetoWalk walk(out, &mapper);
    // The head: the root's keys before traceEvents, with traceEvents closed empty.
    if (!Document(0, *start, "", "]}", [&](JsonTokens& t) { return RootOf(t, walk); })) {
      return false;
    }
    size_t at = *start;
    for (;;) {
      // More than two pieces left: the next one is read on its own.
      if (!text_.Fill(at + 2 * piece_bytes_ + 1)) return false;
      if (text_.end() - at <= 2 * piece_bytes_) break;
      const PieceRead read = Piece(&at, walk);
      if (read == PieceRead::kFailed) return false;
      if (read == PieceRead::kNoCut) break;  // the last entries run past two pieces: the tail's
      text_.Drop(at);
      progress_(at);
    }
    // The tail: the last entries, and the root's keys after traceEvents.
    if (!text_.Fill(SIZE_MAX) || !text_.complete()) return false;
    if (!Document(at, text_.end() - at, "{\"traceEvents\":[", "", [&](JsonTokens& t) { return RootOf(t, walk); })) {
      return false;
    }
    const int64_t t = SteadyNowNs();
    mapper.Finish();
    if (timings != nullptr) {
      timings->index_ns = index_ns_;
      timings->walk_ns = walk_ns_;
      timings->finish_ns = SteadyNowNs() - t;
      timings->pieces = pieces_;
      timings->rejected_cuts = rejected_cuts_;
    }
    return true;
  }

 private:
  static error_code RootOf(JsonTokens& t, KinetoWalk& walk) {
    if (t.Peek() != '{') return simdjson::INCORRECT_TYPE;
    return walk.Root(t);
  }

  // TraceEventsStart over the text's start (nullopt: no traceEvents array there). Text read as
  // it comes is searched up to kMostHeadBytes: a trace's keys before traceEvents take a few
  // hundred bytes, and text that goes on for megabytes without it (a gzip bomb of whitespace)
  // is read whole, whose bounded checks refuse it, instead of growing the window first.
  std::optional<size_t> EntriesStart() {
    for (size_t reach = kPieceOvershootBytes;; reach *= 2) {
      if (!text_.Fill(reach)) return std::nullopt;
      const size_t start = TraceEventsStart(text_.View(0, text_.end()));
      if (start != std::string_view::npos) return start;
      if (text_.complete() || reach >= kMostHeadBytes) return std::nullopt;
    }
  }

  // NextBoundary over as much text as it takes: a candidate found in the text filled so far is
  // the text's (every byte it looked at is there); none found is final only once the text is
  // complete. nullopt: the text could not be filled.
  std::optional<size_t> Boundary(size_t from) {
    for (size_t reach = piece_bytes_;; reach *= 2) {
      if (!text_.Fill(from + reach)) return std::nullopt;
      if (from >= text_.end()) return std::string_view::npos;  // complete: Fill reached from else
      const size_t cut = NextBoundary(text_.View(from, text_.end()), 0);
      if (cut != std::string_view::npos) return from + cut;
      if (text_.complete()) return std::string_view::npos;
    }
  }

  // One piece of entries from *at, cut at the first real boundary past piece_bytes_; *at moves
  // past what was mapped. Entries are mapped as they are read: when a candidate cut turns out to
  // lie inside an entry, only that last entry fails (the ones before it are whole, at the
  // array's own depth), so the next try starts at that entry, with the next candidate cut, and
  // nothing is read twice but the one entry. kNoCut: no candidate past the piece's size (what is
  // left is for the tail).
  enum class PieceRead { kRead, kNoCut, kFailed };
  PieceRead Piece(size_t* at, KinetoWalk& walk) {
    size_t cut = *at + piece_bytes_;
    for (int tries = 0; tries < kMaxCandidatesPerPiece; ++tries) {
      const std::optional<size_t> next = Boundary(cut);
      if (!next) return PieceRead::kFailed;
      cut = *next;
      if (cut == std::string_view::npos) return PieceRead::kNoCut;
      // The entries up to the candidate, without the comma between them and the next.
      std::string_view entries = text_.View(*at, cut);
      while (!entries.empty() && IsJsonSpace(entries.back())) entries.remove_suffix(1);
      if (!entries.empty() && entries.back() == ',') entries.remove_suffix(1);
      size_t read = 0;  // entries read whole (and mapped, if events)
      // Where the entry being read starts in the document, until it is read.
      // (a size_t and a flag: gcc 12 with -fsanitize=thread took an optional here for
      // maybe-uninitialized)
      size_t failed = 0;
      bool failing = false;
      const bool ok = Document(*at, entries.size(), "[", "]", [&](JsonTokens& t) -> error_code {
        return t.ForEachItem([&]() -> error_code {
          failed = t.Offset();
          failing = true;
          if (error_code err = walk.Entry(t)) return err;
          ++read;
          failing = false;
          return simdjson::SUCCESS;
        });
      });
      if (ok) {
        *at = cut;
        ++pieces_;
        return PieceRead::kRead;
      }
      ++rejected_cuts_;
      if (read > 0) {
        // Entries were mapped: the next try must start past them, at the entry that failed. Text
        // after the last entry (the array closed inside the piece) cannot be resumed.
        if (!failing) return PieceRead::kFailed;
        *at += failed - 1;  // the document is '[' + entries
      }
      ++cut;  // not a boundary: the next candidate
    }
    return PieceRead::kFailed;
  }

  // Parses prefix + text[offset, offset + n) + suffix as one document and hands it to `walk`;
  // true when the walk read all of it without an error.
  template <typename F>
  bool Document(size_t offset, size_t n, std::string_view prefix, std::string_view suffix, F&& walk) {
    const size_t size = prefix.size() + n + suffix.size();
    // resize_and_overwrite would skip the zeroing of what the copy writes: not in libstdc++ 12.
    buffer_.resize(size + kPaddingBytes);
    char* to = buffer_.data();
    std::memcpy(to, prefix.data(), prefix.size());
    text_.CopyOut(offset, n, to + prefix.size());
    std::memcpy(to + prefix.size() + n, suffix.data(), suffix.size());
    std::memset(to + size, 0, kPaddingBytes);
    const int64_t t0 = SteadyNowNs();
    // The index grows to the largest document so far, once.
    if (tokens_.Index(buffer_.data(), size) != simdjson::SUCCESS) return false;
    const int64_t t1 = SteadyNowNs();
    index_ns_ += t1 - t0;
    // Tokens left past the root: more text follows it.
    const bool whole = walk(tokens_) == simdjson::SUCCESS && tokens_.AtEnd();
    walk_ns_ += SteadyNowNs() - t1;
    return whole;
  }

  TraceText& text_;
  const size_t piece_bytes_;
  const std::function<void(size_t)>& progress_;
  JsonTokens tokens_;
  std::string buffer_;
  int64_t index_ns_ = 0;
  int64_t walk_ns_ = 0;
  uint32_t pieces_ = 0;
  uint32_t rejected_cuts_ = 0;
};

// In pieces when the text is at least two of them; nullopt when it cannot be read so (then read
// it as one document).
bool InPieces(size_t json_bytes, size_t piece_bytes) {
  return piece_bytes > 0 && json_bytes >= 2 * piece_bytes;
}

std::optional<absl::StatusOr<KinetoTrace>> ParseInPieces(
    TraceText& text, size_t piece_bytes, const std::function<void(size_t)>& progress,
    KinetoReadTimings* timings, EventColumns* reuse) {
  if (piece_bytes == 0 || !text.Fill(2 * piece_bytes)) return std::nullopt;
  if (text.complete() && !InPieces(text.end(), piece_bytes)) return std::nullopt;
  if (!CheckStartsLikeJson(text.View(0, text.end())).ok()) return std::nullopt;
  KinetoTrace out = NewTrace(reuse);
  if (!PieceReader(text, piece_bytes, progress).Read(&out, timings)) return std::nullopt;
  if (out.stats.trace_events == 0) {
    return absl::InvalidArgumentError("no traceEvents: not a PyTorch profiler (Kineto) trace");
  }
  return out;
}

// A gzip'd trace inflated as it is read (gzip_text_stream.h), in pieces, or whole when it is
// shorter than two pieces (then it is all in the window). nullopt when the file is no gzip file
// or anything at all goes wrong: the whole read (TraceBytes) then says precisely what.
std::optional<KinetoTrace> ReadGzipAsItInflates(const std::string& path, size_t piece_bytes,
                                                KinetoReadTimings* timings,
                                                const KinetoReadLimits& limits,
                                                EventColumns* reuse) {
  std::unique_ptr<GzipTextStream> stream =
      GzipTextStream::Open(path, std::min(limits.max_json_bytes, kMaxTraceBytes));
  if (stream == nullptr) return std::nullopt;
  KinetoReadTimings mine;
  std::optional<absl::StatusOr<KinetoTrace>> trace = ParseInPieces(
      *stream, piece_bytes,
      [&](size_t offset) {
        if (limits.progress) limits.progress(offset, stream->expected_size());
      },
      &mine, reuse);
  if (!trace && !stream->failed() && stream->complete() && !InPieces(stream->end(), piece_bytes)) {
    trace = ParseWhole(stream->View(0, stream->end()), &mine, reuse);
  }
  if (!trace || !trace->ok()) return std::nullopt;
  mine.file_bytes = stream->file_bytes();
  mine.json_bytes = stream->end();
  mine.inflate_ns = stream->inflate_ns();
  mine.text_held_bytes = stream->peak_window_bytes();
  mine.event_bytes = (*trace)->events.Bytes();
  if (timings != nullptr) *timings = mine;
  if (limits.progress) limits.progress(stream->end(), stream->end());
  return *std::move(*trace);
}

// Text that is no JSON at all (a file of zeros) gets the parser's own, more precise, error.
absl::Status CheckValueLengths(std::string_view json) {
  if (!CheckStartsLikeJson(json).ok()) return absl::OkStatus();
  if (std::optional<size_t> at = FindOverlongValue(json)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "one value (a string?) runs over ", kMaxValueBlockBytes >> 20, " MiB from byte ", *at,
        ": refused (names are kept up to ", kMaxStringBytes >> 10,
        " KiB; a value this long cannot be parsed in bounded memory)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<KinetoTrace> ParseKinetoTrace(const std::string& json, size_t piece_bytes,
                                            KinetoReadTimings* timings) {
  if (absl::Status st = CheckValueLengths(json); !st.ok()) return st;
  TraceBytes bytes = TraceBytes::Copy(json);
  WholeText text(bytes);
  if (auto pieces = ParseInPieces(text, piece_bytes, [](size_t) {}, timings, nullptr)) {
    return *std::move(pieces);
  }
  return ParseWhole(bytes.json(), timings, nullptr);
}

absl::StatusOr<KinetoTrace> ReadKinetoTraceInPieces(const std::string& path, size_t piece_bytes,
                                                   KinetoReadTimings* timings,
                                                   const KinetoReadLimits& limits,
                                                   EventColumns* reuse) {
  if (piece_bytes > 0) {
    if (std::optional<KinetoTrace> trace = ReadGzipAsItInflates(path, piece_bytes, timings, limits, reuse)) {
      return *std::move(trace);
    }
  }
  // A plain file read in pieces is copied out a piece at a time (pread), never all in memory.
  std::error_code size_error;
  const uintmax_t on_disk = std::filesystem::file_size(path, size_error);
  const bool whole = size_error || !InPieces(on_disk, piece_bytes);
  absl::StatusOr<TraceBytes> bytes = TraceBytes::Read(path, /*populate=*/whole, limits.max_json_bytes);
  if (!bytes.ok()) return bytes.status();  // names the file already
  if (absl::Status st = CheckValueLengths(bytes->json()); !st.ok()) {
    return absl::Status(st.code(), absl::StrCat(path, ": ", st.message()));
  }
  if (timings != nullptr) {
    timings->file_bytes = bytes->file_bytes();
    timings->json_bytes = bytes->json().size();
    timings->inflate_ns = bytes->inflate_ns();
    timings->text_held_bytes = whole || bytes->gzipped() ? bytes->json().size() : 0;
  }
  const uint64_t json_bytes = bytes->json().size();
  WholeText text(*bytes);
  auto pieces = ParseInPieces(
      text, piece_bytes,
      [&](size_t offset) {
        if (limits.progress) limits.progress(offset, json_bytes);
      },
      timings, reuse);
  if (!pieces && bytes->lost_text()) {
    // The pieces gave up after part of the inflated text was handed back: inflate it again.
    bytes = TraceBytes::Read(path, /*populate=*/true, limits.max_json_bytes);
    if (!bytes.ok()) return bytes.status();
  }
  absl::StatusOr<KinetoTrace> trace =
      pieces ? *std::move(pieces) : ParseWhole(bytes->json(), timings, reuse);
  if (!trace.ok()) {
    return absl::Status(trace.status().code(), absl::StrCat(path, ": ", trace.status().message()));
  }
  if (timings != nullptr) timings->event_bytes = trace->events.Bytes();
  if (limits.progress) limits.progress(json_bytes, json_bytes);
  return trace;
}

absl::StatusOr<KinetoTrace> ReadKinetoTrace(const std::string& path, KinetoReadTimings* timings,
                                           const KinetoReadLimits& limits, EventColumns* reuse) {
  return ReadKinetoTraceInPieces(path, kTracePieceBytes, timings, limits, reuse);
}

}  // namespace gpuspy::importers
