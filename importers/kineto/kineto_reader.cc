// The JSON walk: simdjson's On Demand API over the whole document, or piece by piece for large
// ones (each indexed in one SIMD pass, then read in place, no DOM). Only the fields the mapping needs are read; strings come back as views
// into simdjson's string buffer, numbers as their text, so an event costs no allocation.
#include "importers/kineto/kineto_reader.h"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "importers/kineto/bounded_strings.h"
#include "importers/kineto/huge_pages.h"
#include "importers/kineto/json_start.h"
#include "importers/kineto/kineto_mapping.h"
#include "importers/kineto/long_values.h"
#include "importers/kineto/op_work.h"
#include "importers/kineto/trace_bytes.h"
#include "simdjson.h"

namespace gpuspy::importers {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The unescaped text of a JSON string starting at `raw` (just past its opening quote), read in
// place when it holds no escape: the structural pass has validated every string, so its first
// quote closes it. Escaped strings (rare in traces) go through simdjson's unescaping, which copies
// into the parser's string buffer; doing that for every key and name cost ~15% of the walk and as
// much memory as the strings.
// Keys and most values are a few bytes: up to this long, a plain look at each byte beats a library
// call (memchr was 8% of a read). Longer strings go to memchr.
constexpr ptrdiff_t kShortStringBytes = 24;

bool InPlaceString(const char* raw, const char* end, std::string_view* out) {
  for (const char* p = raw; p < end && p - raw < kShortStringBytes; ++p) {
    if (*p == '"') {
      *out = std::string_view(raw, static_cast<size_t>(p - raw));
      return true;
    }
    if (*p == '\\') return false;
  }
  const void* quote = std::memchr(raw, '"', static_cast<size_t>(end - raw));
  if (quote == nullptr) return false;
  const size_t n = static_cast<size_t>(static_cast<const char*>(quote) - raw);
  if (std::memchr(raw, '\\', n) != nullptr) return false;
  *out = std::string_view(raw, n);
  return true;
}

// Whether a string's text holds an escape (then simdjson unescapes it).
bool HasEscape(std::string_view text) {
  if (text.size() > static_cast<size_t>(kShortStringBytes)) {
    return std::memchr(text.data(), '\\', text.size()) != nullptr;
  }
  for (char c : text) {
    if (c == '\\') return true;
  }
  return false;
}

// The end of the document, for InPlaceString's bound (set per parse; one parse per thread).
thread_local const char* g_json_end = nullptr;

error_code KeyOf(simdjson::simdjson_result<od::field>& field, std::string_view* key) {
  od::raw_json_string raw;
  if (error_code err = field.key().get(raw)) return err;
  if (InPlaceString(raw.raw(), g_json_end, key)) return simdjson::SUCCESS;
  return field.unescaped_key().get(*key);
}

// The text of a scalar as the mapping wants it; `*scalar` false for objects and arrays, which
// the caller skips.
error_code ScalarText(od::value v, std::string_view* out, bool* scalar) {
  od::json_type type;
  if (error_code e = v.type().get(type)) return e;
  *scalar = true;
  switch (type) {
    case od::json_type::string: {
      // The quoted text as written, up to the next structural character: the closing quote and
      // any space after it. Its end is the string's end, so only an escape needs looking for.
      std::string_view token = v.raw_json_token();
      while (!token.empty() && IsJsonSpace(token.back())) token.remove_suffix(1);
      if (token.size() >= 2 && token.back() == '"') {
        const std::string_view text = token.substr(1, token.size() - 2);
        if (!HasEscape(text)) {
          *out = text;
          return simdjson::SUCCESS;
        }
      }
      return v.get_string().get(*out);
    }
    case od::json_type::number: {
      // As written: "1695835572943613.592" µs keeps its ns digits (a double would round them).
      std::string_view raw = v.raw_json_token();
      while (!raw.empty() && IsJsonSpace(raw.back())) raw.remove_suffix(1);
      *out = raw;
      return simdjson::SUCCESS;
    }
    case od::json_type::boolean: {
      bool b = false;
      if (error_code e = v.get_bool().get(b)) return e;
      *out = b ? "true" : "false";
      return simdjson::SUCCESS;
    }
    case od::json_type::null: {
      bool is_null = false;
      if (error_code e = v.is_null().get(is_null)) return e;
      if (!is_null) return simdjson::N_ATOM_ERROR;
      *out = {};
      return simdjson::SUCCESS;
    }
    default:
      *scalar = false;
      return simdjson::SUCCESS;
  }
}

// The integers of "grid"/"block": scalars of an array (or object) that read as integers.
error_code ReadInts(od::value v, std::vector<int64_t>* out) {
  od::json_type type;
  if (error_code e = v.type().get(type)) return e;
  auto add = [&](od::value item) -> error_code {
    std::string_view text;
    bool scalar = false;
    if (error_code e = ScalarText(item, &text, &scalar)) return e;
    int64_t n = 0;
    if (scalar && ToInt(text, &n)) out->push_back(n);
    return simdjson::SUCCESS;
  };
  if (type == od::json_type::array) {
    od::array a;
    if (error_code e = v.get_array().get(a)) return e;
    for (auto item : a) {
      od::value iv;
      if (error_code e = item.get(iv)) return e;
      if (error_code e = add(iv)) return e;
    }
  } else if (type == od::json_type::object) {
    od::object o;
    if (error_code e = v.get_object().get(o)) return e;
    for (auto field : o) {
      od::value fv;
      if (error_code e = field.value().get(fv)) return e;
      if (error_code e = add(fv)) return e;
    }
  }
  return simdjson::SUCCESS;
}

// "Input Dims": an array per input, of integers (a tensor's dims) or empty (a scalar, a list).
// An input that is not an array has no dims.
error_code ReadInputDims(od::value v, RawEvent* e) {
  od::array inputs;
  if (error_code err = v.get_array().get(inputs)) return err;
  for (auto item : inputs) {
    od::value iv;
    if (error_code err = item.get(iv)) return err;
    od::json_type type;
    if (error_code err = iv.type().get(type)) return err;
    if (type == od::json_type::array) {
      if (error_code err = ReadInts(iv, &e->input_dims)) return err;
    }
    e->input_dim_ends.push_back(static_cast<uint32_t>(e->input_dims.size()));
  }
  return simdjson::SUCCESS;
}

// "Input type": a type name per input ("float", "Scalar", "").
error_code ReadInputTypes(od::value v, RawEvent* e) {
  od::array inputs;
  if (error_code err = v.get_array().get(inputs)) return err;
  for (auto item : inputs) {
    od::value iv;
    if (error_code err = item.get(iv)) return err;
    std::string_view text;
    bool scalar = false;
    if (error_code err = ScalarText(iv, &text, &scalar)) return err;
    e->input_types.push_back(scalar ? text : std::string_view());
  }
  return simdjson::SUCCESS;
}

// Whether the event is an op whose shapes the mapping reads (the category and name come before
// the args in what Kineto writes; an event that says them later has its shapes read anyway).
bool WantsShapes(const RawEvent& e) {
  return (e.cat.empty() || e.cat == "cpu_op" || e.cat == "Operator") && (e.name.empty() || IsWorkOp(e.name));
}

error_code ReadArgs(od::object args, RawEvent* e) {
  for (auto field : args) {
    std::string_view key;
    if (error_code err = KeyOf(field, &key)) return err;
    od::value v;
    if (error_code err = field.value().get(v)) return err;
    if (key == "grid" || key == "block") {
      od::json_type type;
      if (error_code err = v.type().get(type)) return err;
      if (type == od::json_type::array || type == od::json_type::object) {
        if (error_code err = ReadInts(v, key == "grid" ? &e->grid : &e->block)) return err;
        continue;
      }
    }
    if ((key == "Input Dims" || key == "Input type") && WantsShapes(*e)) {
      od::json_type type;
      if (error_code err = v.type().get(type)) return err;
      if (type == od::json_type::array) {
        const bool dims = key == "Input Dims";
        if (dims) {
          e->input_dims.clear();
          e->input_dim_ends.clear();
        } else {
          e->input_types.clear();
        }
        if (error_code err = dims ? ReadInputDims(v, e) : ReadInputTypes(v, e)) return err;
        continue;
      }
    }
    std::string_view text;
    bool scalar = false;
    if (error_code err = ScalarText(v, &text, &scalar)) return err;
    if (scalar) e->args.emplace_back(key, text);
  }
  return simdjson::SUCCESS;
}

error_code ReadEvent(od::object event, RawEvent* e) {
  for (auto field : event) {
    std::string_view key;
    if (error_code err = KeyOf(field, &key)) return err;
    od::value v;
    if (error_code err = field.value().get(v)) return err;
    // By length first: every event has these few keys, and most compares then fail on size.
    std::string_view* slot = nullptr;
    switch (key.size()) {
      case 2:
        if (key == "ph") slot = &e->ph;
        else if (key == "ts") slot = &e->ts;
        break;
      case 3:
        if (key == "cat") slot = &e->cat;
        else if (key == "dur") slot = &e->dur;
        else if (key == "pid") slot = &e->pid;
        else if (key == "tid") slot = &e->tid;
        break;
      case 4:
        if (key == "name") slot = &e->name;
        break;
      default:
        break;
    }
    if (slot == nullptr) {
      if (key != "args") continue;  // id, bp, s, ...: not read, skipped by the iterator
      od::json_type type;
      if (error_code err = v.type().get(type)) return err;
      if (type != od::json_type::object) continue;
      od::object args;
      if (error_code err = v.get_object().get(args)) return err;
      if (error_code err = ReadArgs(args, e)) return err;
      continue;
    }
    std::string_view text;
    bool scalar = false;
    if (error_code err = ScalarText(v, &text, &scalar)) return err;
    if (scalar) *slot = text;
  }
  return simdjson::SUCCESS;
}

error_code ReadDevice(od::object o, v1::Device* d) {
  for (auto field : o) {
    std::string_view key;
    if (error_code err = KeyOf(field, &key)) return err;
    od::value v;
    if (error_code err = field.value().get(v)) return err;
    std::string_view text;
    bool scalar = false;
    if (error_code err = ScalarText(v, &text, &scalar)) return err;
    if (!scalar) continue;
    int64_t n = 0;
    if (key == "id" && ToInt(text, &n)) d->set_id(static_cast<uint32_t>(n));
    else if (key == "name") d->set_name(std::string(text));
    else if (key == "totalGlobalMem" && ToInt(text, &n)) d->set_global_memory_bytes(n);
    else if (key == "computeMajor" && ToInt(text, &n)) d->set_compute_capability_major(n);
    else if (key == "computeMinor" && ToInt(text, &n)) d->set_compute_capability_minor(n);
    else if (key == "numSms" && ToInt(text, &n)) d->set_sm_count(static_cast<uint32_t>(n));
  }
  return simdjson::SUCCESS;
}

// One traceEvents entry, if it is an object (other entries are skipped, uncounted).
error_code ReadEntry(od::value ev, RawEvent* raw, bool* is_event) {
  od::json_type type;
  if (error_code err = ev.type().get(type)) return err;
  *is_event = type == od::json_type::object;
  if (!*is_event) return simdjson::SUCCESS;
  od::object o;
  if (error_code err = ev.get_object().get(o)) return err;
  raw->Clear();
  return ReadEvent(o, raw);
}

class Walk {
 public:
  Walk(KinetoTrace* out, KinetoMapper* mapper) : out_(out), mapper_(mapper) {}

  error_code Root(od::object root) {
    for (auto field : root) {
      std::string_view key;
      if (error_code err = KeyOf(field, &key)) return err;
      od::value v;
      if (error_code err = field.value().get(v)) return err;
      od::json_type type;
      if (error_code err = v.type().get(type)) return err;
      if (key == "traceEvents" && type == od::json_type::array) {
        if (error_code err = TraceEvents(v)) return err;
      } else if (key == "deviceProperties" && type == od::json_type::array) {
        if (error_code err = Devices(v)) return err;
      } else if (key == "distributedInfo" && type == od::json_type::object) {
        if (error_code err = Distributed(v)) return err;
      } else if (key == "gpuspyNotExported" && type == od::json_type::object) {
        if (error_code err = NotExported(v)) return err;
      } else if (key == "baseTimeNanoseconds") {
        std::string_view text;
        bool scalar = false;
        if (error_code err = ScalarText(v, &text, &scalar)) return err;
        if (scalar) mapper_->SetBase(text);
      }
    }
    return simdjson::SUCCESS;
  }

 private:
  error_code TraceEvents(od::value v) {
    od::array events;
    if (error_code err = v.get_array().get(events)) return err;
    for (auto item : events) {
      od::value ev;
      if (error_code err = item.get(ev)) return err;
      bool is_event = false;
      if (error_code err = ReadEntry(ev, &raw_, &is_event)) return err;
      if (!is_event) continue;
      ++out_->stats.trace_events;
      mapper_->Map(raw_);
    }
    return simdjson::SUCCESS;
  }

  error_code NotExported(od::value v) {
    od::object o;
    if (error_code err = v.get_object().get(o)) return err;
    for (auto field : o) {
      std::string_view what;
      if (error_code err = KeyOf(field, &what)) return err;
      uint64_t n = 0;
      if (field.value().get_uint64().get(n) == simdjson::SUCCESS) out_->stats.not_exported[std::string(what)] += n;
    }
    return simdjson::SUCCESS;
  }

  error_code Devices(od::value v) {
    od::array devices;
    if (error_code err = v.get_array().get(devices)) return err;
    for (auto item : devices) {
      od::value dv;
      if (error_code err = item.get(dv)) return err;
      od::json_type type;
      if (error_code err = dv.type().get(type)) return err;
      if (type != od::json_type::object) continue;
      od::object o;
      if (error_code err = dv.get_object().get(o)) return err;
      v1::Device device;
      if (error_code err = ReadDevice(o, &device)) return err;
      out_->identity.add_devices()->Swap(&device);
    }
    return simdjson::SUCCESS;
  }

  error_code Distributed(od::value v) {
    od::object o;
    if (error_code err = v.get_object().get(o)) return err;
    for (auto field : o) {
      std::string_view key;
      if (error_code err = KeyOf(field, &key)) return err;
      od::value fv;
      if (error_code err = field.value().get(fv)) return err;
      std::string_view text;
      bool scalar = false;
      if (error_code err = ScalarText(fv, &text, &scalar)) return err;
      int64_t n = 0;
      if (!scalar || !ToInt(text, &n)) continue;
      if (key == "rank") out_->identity.set_rank(static_cast<int32_t>(n));
      else if (key == "world_size") out_->identity.set_world_size(static_cast<int32_t>(n));
    }
    return simdjson::SUCCESS;
  }

  KinetoTrace* out_;
  KinetoMapper* mapper_;
  RawEvent raw_;  // reused: its vectors keep their capacity from event to event
};

// Where the walk stopped, for the error message: 1-based, the byte the parser could not take.
uint64_t ErrorByte(od::document& doc, std::string_view json) {
  const char* at = nullptr;
  if (doc.current_location().get(at) == simdjson::SUCCESS && at >= json.data() &&
      at <= json.data() + json.size()) {
    return static_cast<uint64_t>(at - json.data()) + 1;
  }
  return json.size();  // past the last token: the document ends too early
}

// A trace before its events: rank and local rank unknown until distributedInfo says.
KinetoTrace NewTrace() {
  KinetoTrace out;
  out.identity.set_rank(-1);
  out.identity.set_local_rank(-1);
  return out;
}

absl::StatusOr<KinetoTrace> ParseWhole(std::string_view json, KinetoReadTimings* timings) {
  if (absl::Status st = CheckStartsLikeJson(json); !st.ok()) return st;
  const int64_t t0 = NowNs();
  KinetoTrace out = NewTrace();
  od::parser parser(std::max<size_t>(json.size(), 1));
  g_json_end = json.data() + json.size();
  od::document doc;
  auto fail = [&](error_code err, uint64_t byte) {
    return absl::InvalidArgumentError(absl::StrCat("not valid trace JSON at byte ", byte, ": ",
                                                   simdjson::error_message(err)));
  };
  if (error_code err = parser.iterate(json.data(), json.size(), json.size() + kPaddingBytes)
                           .get(doc)) {
    if (err == simdjson::MEMALLOC) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "cannot allocate the parser's index for ", json.size(), " bytes of JSON"));
    }
    // The structural pass found no place to blame (an unclosed string, bad UTF-8).
    return fail(err, json.size());
  }
  const int64_t t1 = NowNs();
  od::json_type type;
  if (error_code err = doc.type().get(type)) return fail(err, ErrorByte(doc, json));
  KinetoMapper mapper(&out);
  if (type == od::json_type::object) {
    od::object root;
    if (error_code err = doc.get_object().get(root)) return fail(err, ErrorByte(doc, json));
    Walk walk(&out, &mapper);
    if (error_code err = walk.Root(root)) return fail(err, ErrorByte(doc, json));
    // Past the root object the iterator is at the end; a location means more text follows.
    const char* rest = nullptr;
    if (doc.current_location().get(rest) == simdjson::SUCCESS) {
      return fail(simdjson::TRAILING_CONTENT, ErrorByte(doc, json));
    }
  }
  if (out.stats.trace_events == 0) {
    return absl::InvalidArgumentError("no traceEvents: not a PyTorch profiler (Kineto) trace");
  }
  const int64_t t2 = NowNs();
  mapper.Finish();
  if (timings != nullptr) {
    timings->index_ns = t1 - t0;
    timings->walk_ns = t2 - t1;
    timings->finish_ns = NowNs() - t2;
  }
  return out;
}

// --- Reading in pieces -----------------------------------------------------------------------
//
// simdjson 3.0 indexes a whole document before its walk can start, and its stream API takes only
// whitespace-separated documents, not an array's comma-separated entries. So a large trace is cut
// into documents of its own, each one simdjson parses as it would the whole:
//   head:   the text up to traceEvents' '['     + "]}"   (the keys before traceEvents)
//   pieces: '[' + entries i..j of traceEvents   + "]"    (about piece_bytes each)
//   tail:   "{\"traceEvents\":[" + the rest of the text (the last entries and the keys after)
// A cut goes before a '{' that follows "}," (NextBoundary): a candidate only, since that text may
// sit inside a string or a nested array. simdjson is the judge: a piece ending at a candidate
// parses as an array only if the candidate is a real boundary between entries (ending inside a
// string leaves it unclosed; inside a nested value leaves brackets open), and then the next
// candidate is tried (PieceReader::Piece). Whatever fails (no traceEvents key at the top, no boundary found, an
// invalid head or tail) is read again as one document, so errors and results are the whole
// read's.

constexpr int kMaxCandidatesPerPiece = 64;
// How far past its size a piece usually runs to the next boundary: an entry or a few.
constexpr size_t kPieceOvershootBytes = 1 << 20;

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
  // `release(offset)`: the reader is done with the text before `offset`.
  PieceReader(const TraceBytes& bytes, size_t piece_bytes, const std::function<void(size_t)>& release)
      : bytes_(bytes), json_(bytes.json()), piece_bytes_(piece_bytes), release_(release),
        parser_(kMaxTraceBytes) {
    // Room for a piece and the entry it runs into, once: grown piece by piece (simdjson
    // reallocates for each document longer than any before), the parser's ~5x-the-piece of
    // buffers was faulted in afresh about ten times per trace.
    const size_t room = std::min(json_.size(), piece_bytes + kPieceOvershootBytes);
    buffer_.reserve(room + 2 + kPaddingBytes);
    // Should it fail, iterate() allocates what each document needs, as before.
    if (parser_.allocate(room) != simdjson::SUCCESS) return;
  }

  // False when the text cannot be read in pieces (then nothing of `out` is to be used).
  bool Read(KinetoTrace* out, KinetoReadTimings* timings) {
    const size_t start = TraceEventsStart(json_);
    if (start == std::string_view::npos) return false;
    ReserveForText(json_.size(), &out->events);
    KinetoMapper mapper(out);
    Walk walk(out, &mapper);
    // The head: the root's keys before traceEvents, with traceEvents closed empty.
    if (!Document(0, start, "", "]}", [&](od::document& doc) { return RootOf(doc, walk); })) {
      return false;
    }
    size_t at = start;
    while (json_.size() - at > 2 * piece_bytes_) {
      const PieceRead read = Piece(&at, out, &mapper);
      if (read == PieceRead::kFailed) return false;
      if (read == PieceRead::kNoCut) break;  // the last entries run past two pieces: the tail's
      release_(at);
    }
    // The tail: the last entries, and the root's keys after traceEvents.
    if (!Document(at, json_.size() - at, "{\"traceEvents\":[", "", [&](od::document& doc) { return RootOf(doc, walk); })) {
      return false;
    }
    const int64_t t = NowNs();
    mapper.Finish();
    if (timings != nullptr) {
      timings->index_ns = index_ns_;
      timings->walk_ns = walk_ns_;
      timings->finish_ns = NowNs() - t;
      timings->pieces = pieces_;
      timings->rejected_cuts = rejected_cuts_;
    }
    return true;
  }

 private:
  static error_code RootOf(od::document& doc, Walk& walk) {
    od::object root;
    if (error_code err = doc.get_object().get(root)) return err;
    return walk.Root(root);
  }

  // One piece of entries from *at, cut at the first real boundary past piece_bytes_; *at moves
  // past what was mapped. Entries are mapped as they are read: when a candidate cut turns out to
  // lie inside an entry, only that last entry fails (the ones before it are whole, at the
  // array's own depth), so the next try starts at that entry, with the next candidate cut, and
  // nothing is read twice but the one entry. kNoCut: no candidate past the piece's size (what is
  // left is for the tail).
  enum class PieceRead { kRead, kNoCut, kFailed };
  PieceRead Piece(size_t* at, KinetoTrace* out, KinetoMapper* mapper) {
    size_t cut = *at + piece_bytes_;
    for (int tries = 0; tries < kMaxCandidatesPerPiece; ++tries) {
      cut = NextBoundary(json_, cut);
      if (cut == std::string_view::npos) return PieceRead::kNoCut;
      // The entries up to the candidate, without the comma between them and the next.
      std::string_view entries = json_.substr(*at, cut - *at);
      while (!entries.empty() && IsJsonSpace(entries.back())) entries.remove_suffix(1);
      if (!entries.empty() && entries.back() == ',') entries.remove_suffix(1);
      size_t read = 0;                  // entries read whole (and mapped, if events)
      const char* failed = nullptr;     // where the entry being read starts, until it is read
      const bool ok = Document(*at, entries.size(), "[", "]", [&](od::document& doc) -> error_code {
        od::array events;
        if (error_code err = doc.get_array().get(events)) return err;
        for (auto item : events) {
          od::value ev;
          if (error_code err = item.get(ev)) return err;
          failed = ev.raw_json_token().data();
          bool is_event = false;
          if (error_code err = ReadEntry(ev, &raw_, &is_event)) return err;
          if (is_event) {
            ++out->stats.trace_events;
            mapper->Map(raw_);
          }
          ++read;
          failed = nullptr;
        }
        return simdjson::SUCCESS;
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
        if (failed == nullptr) return PieceRead::kFailed;
        *at += static_cast<size_t>(failed - (buffer_.data() + 1));  // buffer_ = '[' + entries
      }
      ++cut;  // not a boundary: the next candidate
    }
    return PieceRead::kFailed;
  }

  // Parses prefix + json_[offset, offset + n) + suffix as one document and hands it to `walk`;
  // true when the walk read all of it without an error.
  template <typename F>
  bool Document(size_t offset, size_t n, std::string_view prefix, std::string_view suffix, F&& walk) {
    const size_t size = prefix.size() + n + suffix.size();
    // resize_and_overwrite would skip the zeroing of what the copy writes: not in libstdc++ 12.
    buffer_.resize(size + kPaddingBytes);
    char* to = buffer_.data();
    std::memcpy(to, prefix.data(), prefix.size());
    bytes_.CopyOut(offset, n, to + prefix.size());
    std::memcpy(to + prefix.size() + n, suffix.data(), suffix.size());
    std::memset(to + size, 0, kPaddingBytes);
    g_json_end = buffer_.data() + size;
    const int64_t t0 = NowNs();
    od::document doc;  // the parser grows to the largest document so far, once
    if (parser_.iterate(buffer_.data(), size, buffer_.size()).get(doc) != simdjson::SUCCESS) return false;
    const int64_t t1 = NowNs();
    index_ns_ += t1 - t0;
    const bool ok = walk(doc) == simdjson::SUCCESS;
    // Past the root the iterator is at the end; a location means more text follows.
    const char* rest = nullptr;
    const bool whole = ok && doc.current_location().get(rest) != simdjson::SUCCESS;
    walk_ns_ += NowNs() - t1;
    return whole;
  }

  const TraceBytes& bytes_;
  std::string_view json_;
  const size_t piece_bytes_;
  const std::function<void(size_t)>& release_;
  od::parser parser_;
  std::string buffer_;
  RawEvent raw_;  // reused: its vectors keep their capacity from event to event
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
    const TraceBytes& bytes, size_t piece_bytes, const std::function<void(size_t)>& release,
    KinetoReadTimings* timings) {
  const std::string_view json = bytes.json();
  if (!InPieces(json.size(), piece_bytes) || !CheckStartsLikeJson(json).ok()) return std::nullopt;
  KinetoTrace out = NewTrace();
  if (!PieceReader(bytes, piece_bytes, release).Read(&out, timings)) return std::nullopt;
  if (out.stats.trace_events == 0) {
    return absl::InvalidArgumentError("no traceEvents: not a PyTorch profiler (Kineto) trace");
  }
  return out;
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
  const TraceBytes bytes = TraceBytes::Copy(json);
  if (auto pieces = ParseInPieces(bytes, piece_bytes, [](size_t) {}, timings)) {
    return *std::move(pieces);
  }
  return ParseWhole(bytes.json(), timings);
}

absl::StatusOr<KinetoTrace> ReadKinetoTraceInPieces(const std::string& path, size_t piece_bytes,
                                                   KinetoReadTimings* timings,
                                                   const KinetoReadLimits& limits) {
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
  }
  const uint64_t json_bytes = bytes->json().size();
  auto pieces = ParseInPieces(
      *bytes, piece_bytes,
      [&](size_t offset) {
        bytes->ReleaseBefore(offset);
        if (limits.progress) limits.progress(offset, json_bytes);
      },
      timings);
  if (!pieces && bytes->lost_text()) {
    // The pieces gave up after part of the inflated text was handed back: inflate it again.
    bytes = TraceBytes::Read(path, /*populate=*/true, limits.max_json_bytes);
    if (!bytes.ok()) return bytes.status();
  }
  absl::StatusOr<KinetoTrace> trace = pieces ? *std::move(pieces) : ParseWhole(bytes->json(), timings);
  if (!trace.ok()) {
    return absl::Status(trace.status().code(), absl::StrCat(path, ": ", trace.status().message()));
  }
  if (limits.progress) limits.progress(json_bytes, json_bytes);
  return trace;
}

absl::StatusOr<KinetoTrace> ReadKinetoTrace(const std::string& path, KinetoReadTimings* timings,
                                           const KinetoReadLimits& limits) {
  return ReadKinetoTraceInPieces(path, kTracePieceBytes, timings, limits);
}

}  // namespace gpuspy::importers
