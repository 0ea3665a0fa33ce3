#include "importers/kineto/kineto_mapping.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gpuspy/v1/events.pb.h"
#include "importers/kineto/absl_view.h"
#include "importers/kineto/memory_samples.h"
#include "importers/kineto/op_work.h"
#include "importers/kineto/python_call_sites.h"
#include "model/call_site.h"
#include "model/dtypes.h"

namespace gpuspy::importers {
namespace {

// absl::SimpleAtoi, faster on what traces hold: std::from_chars takes plain [-]digits (what
// SimpleAtoi gives the same value for) at a third of the cost; anything else (a '+', spaces,
// overflow) goes to SimpleAtoi, so the accepted texts and values are SimpleAtoi's. Integer
// parsing was the walk's largest single cost (13%) before.
// Whether `s` may still be a number after std::from_chars refused it (what the absl parsers
// take: leading whitespace, a sign, a '.' for doubles); "stream 7" and "Spans" may not, and
// tids like these are a GPU event's every time.
bool MayBeNumber(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\n\r");
  if (first == std::string_view::npos) return false;
  const char c = s[first];
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.';
}

// Up to this many decimal digits cannot overflow an int64, so they are read without a check per
// digit: libstdc++'s std::from_chars, which checks, was 3% of a trace read.
constexpr ptrdiff_t kUncheckedDigits = 18;

// The decimal digits [p, end) (all of them digits, at most kUncheckedDigits), or nullopt.
std::optional<uint64_t> ShortDigits(const char* p, const char* end) {
  uint64_t v = 0;
  for (; p != end; ++p) {
    const unsigned d = static_cast<unsigned char>(*p) - '0';
    if (d > 9) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

// Plain [-]digits, what traces hold, as std::from_chars reads them whole.
bool PlainAtoi(std::string_view s, int64_t* out) {
  const char* p = s.data();
  const char* const end = p + s.size();
  const bool negative = p != end && *p == '-';
  if (negative) ++p;
  if (end - p == 0 || end - p > kUncheckedDigits) {
    const auto [stop, ec] = std::from_chars(s.data(), end, *out);
    return ec == std::errc() && stop == end && !s.empty();
  }
  const std::optional<uint64_t> v = ShortDigits(p, end);
  if (!v) return false;
  *out = negative ? -static_cast<int64_t>(*v) : static_cast<int64_t>(*v);
  return true;
}

bool Atoi(std::string_view s, int64_t* out) {
  int64_t n = 0;
  if (PlainAtoi(s, &n)) {
    *out = n;
    return true;
  }
  return MayBeNumber(s) && absl::SimpleAtoi(AbslView(s), out);
}

MemoryKind MemoryKindFromWord(std::string_view w) {
  if (w == "Pageable") return MemoryKind::kPageable;
  if (w == "Pinned") return MemoryKind::kPinned;
  if (w == "Device") return MemoryKind::kDevice;
  if (w == "Managed") return MemoryKind::kManaged;
  if (w == "Array") return MemoryKind::kArray;
  return MemoryKind::kUnknown;
}

// "Memcpy HtoD (Pageable -> Device)"
void ParseMemcpyName(std::string_view name, MemcpyEvent* m) {
  if (absl::StrContains(AbslView(name), "HtoD")) m->copy_kind = CopyKind::kHtoD;
  else if (absl::StrContains(AbslView(name), "DtoH")) m->copy_kind = CopyKind::kDtoH;
  else if (absl::StrContains(AbslView(name), "DtoD")) m->copy_kind = CopyKind::kDtoD;
  else if (absl::StrContains(AbslView(name), "PtoP")) m->copy_kind = CopyKind::kPtoP;
  else if (absl::StrContains(AbslView(name), "HtoH")) m->copy_kind = CopyKind::kHtoH;
  const size_t open = name.find('('), arrow = name.find(" -> "), close = name.rfind(')');
  if (open != std::string_view::npos && arrow != std::string_view::npos &&
      close != std::string_view::npos && open < arrow && arrow < close) {
    m->src_kind = MemoryKindFromWord(name.substr(open + 1, arrow - open - 1));
    m->dst_kind = MemoryKindFromWord(name.substr(arrow + 4, close - arrow - 4));
  }
}

SyncKind SyncKindFrom(std::string_view kind) {
  if (kind == "Stream Sync") return SyncKind::kStream;
  if (kind == "Event Sync") return SyncKind::kEvent;
  if (kind == "Context Sync") return SyncKind::kContext;
  if (kind == "Stream Wait Event") return SyncKind::kStreamWaitEvent;
  return SyncKind::kUnknown;
}

// Elements x bytes per element; 0 when either is unknown or the product does not fit.
uint64_t MessageBytes(std::string_view nelems, uint32_t dtype_size) {
  int64_t n = 0;
  if (dtype_size == 0 || !ToInt(nelems, &n) || n <= 0) return 0;
  if (static_cast<uint64_t>(n) > std::numeric_limits<uint64_t>::max() / dtype_size) return 0;
  return static_cast<uint64_t>(n) * dtype_size;
}

// What a communication kernel moves, from the args PyTorch's profiler gives NCCL kernels
// ("Collective name", "In msg nelems", "dtype", "Process Group Name", "Group size", "Seq").
CollectiveEvent CollectiveOf(const RawEvent& e, uint64_t correlation, BoundedInterner* s) {
  CollectiveEvent c;
  c.correlation_id = correlation;
  c.op = s->Intern(e.Arg("Collective name"));
  const std::string dtype(e.Arg("dtype"));
  c.dtype = s->Intern(dtype);
  c.group = s->Intern(e.Arg("Process Group Name"));
  c.in_bytes = MessageBytes(e.Arg("In msg nelems"), DtypeSize(dtype));
  c.out_bytes = MessageBytes(e.Arg("Out msg nelems"), DtypeSize(dtype));
  int64_t v = 0;
  if (ToInt(e.Arg("Group size"), &v) && v > 0 && v <= std::numeric_limits<uint32_t>::max()) {
    c.group_size = static_cast<uint32_t>(v);
  }
  const std::string_view seq = e.FindArg("Seq") != nullptr ? e.Arg("Seq") : e.Arg("seq");
  if (ToInt(seq, &v) && v >= 0) c.sequence = v;
  return c;
}

// The categories the mapping imports; everything else is skipped and counted by category.
enum class Category { kOther, kKernel, kMemcpy, kMemset, kRuntime, kDriver, kSync, kHostRange };

// Kineto's names for them. An event's index in this table also keys the mapper's counts by
// category and its host-range domains.
struct KnownCategory {
  std::string_view name;
  Category category;
};
constexpr std::array<KnownCategory, 11> kKnownCategories = {{
    {"kernel", Category::kKernel},
    {"cuda_runtime", Category::kRuntime},
    {kCpuOpDomain, Category::kHostRange},
    {kPythonFunctionDomain, Category::kHostRange},
    {"user_annotation", Category::kHostRange},
    {"Trace", Category::kHostRange},
    {"cuda_profiler_range", Category::kHostRange},
    {"gpu_memcpy", Category::kMemcpy},
    {"gpu_memset", Category::kMemset},
    {"cuda_driver", Category::kDriver},
    {"cuda_sync", Category::kSync},
}};
static_assert(kKnownCategories.size() == KinetoMapper::kKnownCategoryCount);

// What KnownCategoryOf relies on: no two names share their length, first and last letters.
constexpr bool TellApartByLengthAndEnds() {
  for (size_t i = 0; i < kKnownCategories.size(); ++i) {
    for (size_t j = i + 1; j < kKnownCategories.size(); ++j) {
      const std::string_view a = kKnownCategories[i].name, b = kKnownCategories[j].name;
      if (a.size() == b.size() && a.front() == b.front() && a.back() == b.back()) return false;
    }
  }
  return true;
}
static_assert(TellApartByLengthAndEnds());

// PyTorch 1.8-1.10 (2021) wrote the categories capitalised, before Kineto's names: the same
// events under other words (the TensorBoard profiler tutorial's traces are in this dialect).
std::string_view CanonicalCategory(std::string_view cat) {
  if (cat.empty() || cat[0] < 'A' || cat[0] > 'Z') return cat;  // the current names are lower case
  if (cat == "Operator") return kCpuOpDomain;
  if (cat == "Runtime") return "cuda_runtime";
  if (cat == "Kernel") return "kernel";
  if (cat == "Memcpy") return "gpu_memcpy";
  if (cat == "Memset") return "gpu_memset";
  return cat;
}

// The index of `cat` in kKnownCategories; kKnownCategories.size() for any other.
size_t KnownCategoryOf(std::string_view cat) {
  // No two names share their length, first and last letters, so one compare with the candidate
  // decides (a compare with every name of the same length was a memcmp call per event).
  if (cat.empty()) return kKnownCategories.size();
  for (size_t i = 0; i < kKnownCategories.size(); ++i) {
    const std::string_view name = kKnownCategories[i].name;
    if (name.size() == cat.size() && name.front() == cat.front() && name.back() == cat.back()) {
      return std::memcmp(name.data(), cat.data(), cat.size()) == 0 ? i : kKnownCategories.size();
    }
  }
  return kKnownCategories.size();
}

// "phase s": why an event that is not a complete event ("ph": "X") is skipped. Made once per
// phase (Finish folds the one-letter phases' counts), not per event.
std::string PhaseReason(std::string_view ph) {
  if (ph.empty()) return "no phase";
  return absl::StrCat("phase ", AbslView(ph));
}

void Count(absl::flat_hash_map<std::string, uint64_t>* counts, std::string_view key) {
  auto it = counts->find(AbslView(key));
  if (it == counts->end()) it = counts->emplace(std::string(key), 0).first;
  ++it->second;
}

}  // namespace

// `*out` changes only on success: absl::SimpleAtoi leaves what it parsed of "1.8e19" (1) behind.
bool ToInt(std::string_view s, int64_t* out) {
  if (s.empty()) return false;  // an arg the event does not have
  int64_t n = 0;
  if (PlainAtoi(s, &n)) {
    *out = n;
    return true;
  }
  // "inf" and "nan" are no integers either: no absl parse for text that cannot be a number.
  if (!MayBeNumber(s)) return false;
  if (absl::SimpleAtoi(AbslView(s), &n)) {
    *out = n;
    return true;
  }
  double d = 0;  // "7.0" style integers
  // Range first: converting a double beyond int64 (4e29, inf; NaN fails both tests) is undefined
  // behaviour, not a saturated value (found by tests/fuzz/kineto_trace_fuzz).
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (!absl::SimpleAtod(AbslView(s), &d) || !(d >= -kTwoTo63 && d < kTwoTo63) || d != std::trunc(d)) {
    return false;
  }
  *out = static_cast<int64_t>(d);
  return true;
}

namespace {

// The value of the eight ASCII digits at `p`, nullopt when a byte is no digit: one load and three
// multiplies instead of eight steps (the SWAR parse simdjson and fast_float use). A timestamp's
// 16 whole digits take two: MicrosToNanos went from 2.7% to 2.1% of a read.
std::optional<uint64_t> EightDigits(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  // Every byte's high nibble is 3, and stays 3 with 6 added: '0'..'9' and nothing else.
  if ((((v & 0xF0F0F0F0F0F0F0F0) | (((v + 0x0606060606060606) & 0xF0F0F0F0F0F0F0F0) >> 4))) !=
      0x3333333333333333) {
    return std::nullopt;
  }
  v -= 0x3030303030303030;
  v = (v * 10) + (v >> 8);  // pairs of digits
  return (((v & 0x000000FF000000FF) * (100 + (1000000ULL << 32))) +
          (((v >> 16) & 0x000000FF000000FF) * (1 + (10000ULL << 32)))) >> 32;
}

// What Kineto writes: [-]digits[.digits]. Parsed in one pass (two string scans, two substrings
// and two integer parses each were ~3% of a read, for two times per event); nullopt for anything
// else, which MicrosToNanos's general path takes.
std::optional<int64_t> PlainMicrosToNanos(std::string_view text) {
  const char* p = text.data();
  const char* const end = p + text.size();
  const bool negative = p != end && *p == '-';
  if (negative) ++p;
  const char* after = p;
  uint64_t whole = 0;
  // Eight digits at a time while they fit in the text and in the unchecked length.
  while (end - after >= 8 && (after - p) + 8 <= kUncheckedDigits) {
    const std::optional<uint64_t> eight = EightDigits(after);
    if (!eight) break;
    whole = whole * 100'000'000 + *eight;
    after += 8;
  }
  for (unsigned d; after != end && (d = static_cast<unsigned char>(*after) - '0') <= 9; ++after) {
    whole = whole * 10 + d;
    // Longer whole parts are past int64's ns anyway, or zero-padded: the general path's.
    if (after - p == kUncheckedDigits) return std::nullopt;
  }
  if (after == p) return std::nullopt;
  const int64_t us = static_cast<int64_t>(whole);
  if (us > INT64_MAX / 1000 - 1) return std::nullopt;
  int64_t sub = 0;
  if (after != end) {
    if (*after != '.') return std::nullopt;
    int digits = 0;
    for (const char* d = after + 1; d != end; ++d, ++digits) {
      if (*d < '0' || *d > '9') return std::nullopt;
      if (digits < 3) sub = sub * 10 + (*d - '0');
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 3; ++digits) sub *= 10;  // "12.5" is 12500 ns
  }
  const int64_t ns = us * 1000 + sub;
  return negative ? -ns : ns;
}

}  // namespace

bool MicrosToNanos(std::string_view text, int64_t* ns) {
  if (const std::optional<int64_t> plain = PlainMicrosToNanos(text)) {
    *ns = *plain;
    return true;
  }
  if (text.empty()) return false;
  const bool negative = text[0] == '-';
  const std::string_view body = negative ? text.substr(1) : text;
  const size_t dot = body.find('.');
  const std::string_view whole = body.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? "" : body.substr(dot + 1);
  if (frac.find_first_of("eE") != std::string_view::npos || whole.empty()) {
    double d = 0;  // exponent notation: rare, accept double precision
    if (!absl::SimpleAtod(AbslView(text), &d)) return false;
    const double scaled = d * 1000.0;
    // Beyond int64 the conversion is undefined behaviour; such a time is no time.
    if (!(scaled >= -9.2e18 && scaled <= 9.2e18)) return false;
    *ns = static_cast<int64_t>(scaled);
    return true;
  }
  int64_t us = 0;
  if (!Atoi(whole, &us)) return false;
  // ns resolution: the first three fractional digits, finer ones dropped.
  char milli[3] = {'0', '0', '0'};
  std::memcpy(milli, frac.data(), std::min<size_t>(frac.size(), 3));
  int64_t sub = 0;
  if (!Atoi(std::string_view(milli, 3), &sub)) return false;
  if (us > INT64_MAX / 1000 - 1) return false;
  *ns = us * 1000 + sub;
  if (negative) *ns = -*ns;
  return true;
}

bool MicrosToNanos(const std::string& text, int64_t* ns) {
  return MicrosToNanos(std::string_view(text), ns);
}

void KinetoMapper::Skip(std::string_view why) { Count(&skipped_, why); }

void KinetoMapper::SetBase(std::string_view text) {
  int64_t n = 0;
  if (ToInt(text, &n)) base_ns_ = n;
}

void KinetoMapper::KeepThreadName(const RawEvent& e) {
  int64_t tid = 0;
  const std::string_view name = e.Arg("name");
  if (!ToInt(e.tid, &tid) || tid <= 0 || name.empty()) return;
  // Bounded like every kept string: a trace has a few dozen threads, not millions.
  auto& names = thread_names_[std::string(e.pid)];
  if (names.size() < kMaxThreadNames) names[static_cast<uint32_t>(tid)] = std::string(name.substr(0, 200));
}

void KinetoMapper::Map(const RawEvent& e) {
  if (Matches(e.name, "[memory]")) {  // an instant event ("ph": "i") with the allocator's totals
    MapMemorySample(e);
    return;
  }
  if (Matches(e.ph, "M") && Matches(e.name, "thread_name")) KeepThreadName(e);  // still counted as skipped
  if (!Matches(e.ph, "X")) {
    if (e.ph.size() == 1 && e.ph[0] > 0) {
      ++skipped_phases_[static_cast<unsigned char>(e.ph[0])];  // flow arrows: a third of the events
      return;
    }
    Skip(PhaseReason(e.ph));
    return;
  }
  const std::string_view cat = CanonicalCategory(e.cat);
  const size_t known = KnownCategoryOf(cat);
  const Category category = known < kKnownCategories.size() ? kKnownCategories[known].category : Category::kOther;
  if (category == Category::kOther) {
    Skip(e.cat.empty() ? std::string_view("no category") : e.cat);
    return;
  }
  int64_t start = 0, dur = 0;
  if (!MicrosToNanos(e.ts, &start) || !MicrosToNanos(e.dur.empty() ? "0" : e.dur, &dur)) {
    Skip("bad timestamp");
    return;
  }
  if (dur < 0) {
    Skip("negative duration");
    return;
  }
  const int64_t end = start + dur;
  // Only what the event's kind keeps is read: a host range has no correlation and no stream, a
  // CUDA call no stream, GPU work no thread (each read is a search of the args and a parse).
  const bool on_host = category == Category::kHostRange || category == Category::kRuntime ||
                       category == Category::kDriver;
  int64_t corr = 0, device = 0, context = 0, stream = 0, tid = 0;
  if (category != Category::kHostRange) ToInt(e.Arg("correlation"), &corr);
  if (!on_host) {
    ToInt(e.Arg("device"), &device);
    ToInt(e.Arg("context"), &context);
    ToInt(e.Arg("stream"), &stream);
  } else {
    ToInt(e.tid, &tid);
  }
  const StreamKey key{static_cast<uint32_t>(device), static_cast<uint32_t>(context),
                      static_cast<uint32_t>(stream)};
  EventColumns& ev = out_->events;
  switch (category) {
    case Category::kKernel: {
      if (e.FindArg("whole graph") != nullptr) {  // gpuspy's export of a graph record
        int64_t graph = 0;
        ToInt(e.Arg("graph id"), &graph);
        ev.graph_launches.push_back({start, end, static_cast<uint64_t>(corr), key,
                                     static_cast<uint32_t>(graph)});
        break;
      }
      KernelEvent k;
      k.start_ns = start;
      k.end_ns = end;
      k.correlation_id = static_cast<uint64_t>(corr);
      k.name = names_.Intern(e.name);
      k.stream = key;
      if (e.grid.size() == 3) {
        k.shape.grid_x = static_cast<uint32_t>(e.grid[0]);
        k.shape.grid_y = static_cast<uint32_t>(e.grid[1]);
        k.shape.grid_z = static_cast<uint32_t>(e.grid[2]);
      }
      if (e.block.size() == 3) {
        k.shape.block_x = static_cast<uint32_t>(e.block[0]);
        k.shape.block_y = static_cast<uint32_t>(e.block[1]);
        k.shape.block_z = static_cast<uint32_t>(e.block[2]);
      }
      int64_t v = 0;
      if (ToInt(e.Arg("registers per thread"), &v)) k.shape.registers_per_thread = static_cast<uint32_t>(v);
      if (ToInt(e.Arg("shared memory"), &v)) k.shape.static_shared_bytes = static_cast<uint32_t>(v);
      ev.kernels.push_back(k);
      if (e.FindArg("Collective name") != nullptr) {
        ev.collectives.push_back(CollectiveOf(e, k.correlation_id, &names_));
        ++out_->stats.collectives;
      }
      break;
    }
    case Category::kMemcpy: {
      MemcpyEvent m;
      m.start_ns = start;
      m.end_ns = end;
      m.correlation_id = static_cast<uint64_t>(corr);
      m.stream = key;
      ParseMemcpyName(e.name, &m);
      int64_t bytes = 0;
      ToInt(e.Arg("bytes"), &bytes);
      m.bytes = static_cast<uint64_t>(std::max<int64_t>(0, bytes));
      // Kineto does not record the async flag; copies touching pageable memory are synchronous.
      m.async = m.src_kind != MemoryKind::kPageable && m.dst_kind != MemoryKind::kPageable;
      m.src_device_id = m.dst_device_id = key.device_id;
      ev.memcpys.push_back(m);
      break;
    }
    case Category::kMemset: {
      MemsetEvent m;
      m.start_ns = start;
      m.end_ns = end;
      m.correlation_id = static_cast<uint64_t>(corr);
      m.stream = key;
      m.memory_kind = MemoryKind::kDevice;
      m.async = true;
      int64_t bytes = 0;
      ToInt(e.Arg("bytes"), &bytes);
      m.bytes = static_cast<uint64_t>(std::max<int64_t>(0, bytes));
      ev.memsets.push_back(m);
      break;
    }
    case Category::kRuntime:
    case Category::kDriver: {
      ApiEvent a;
      a.start_ns = start;
      a.end_ns = end;
      a.correlation_id = static_cast<uint64_t>(corr);
      a.domain = category == Category::kDriver ? ApiDomain::kDriver : ApiDomain::kRuntime;
      int64_t cbid = 0;
      ToInt(e.Arg("cbid"), &cbid);
      a.cbid = static_cast<uint32_t>(cbid);
      a.name = names_.Intern(e.name);
      a.thread_id = static_cast<uint32_t>(tid);
      ev.apis.push_back(a);
      VoteForPid(e.pid);
      break;
    }
    case Category::kSync: {
      SyncEvent y;
      y.start_ns = start;
      y.end_ns = end;
      y.correlation_id = static_cast<uint64_t>(corr);
      y.stream = key;
      const std::string_view kind = e.Arg("cuda_sync_kind");
      y.sync_kind = SyncKindFrom(kind.empty() ? e.name : kind);
      ev.syncs.push_back(y);
      break;
    }
    case Category::kHostRange: {  // record_function (ProfilerStep#N), ATen ops, Python frames
      // Interned once per category (the same ref every time; a hash of the name per range was not).
      StringRef& domain = domain_refs_[known];
      if (domain == 0) domain = names_.Intern(cat == "Trace" ? kCaptureDomain : cat);
      ev.nvtx_ranges.push_back({start, end, domain, names_.Intern(e.name),
                                static_cast<uint32_t>(tid), 0});
      if (cat == kCpuOpDomain) MapOpWork(e, start, end, static_cast<uint32_t>(tid));
      if (const std::string_view* stack = e.FindArg("Call stack"); stack != nullptr) {
        // The op's user frames as nested ranges over it, outermost first (the sweep's order
        // for ranges that start and end together).
        const std::vector<std::string_view> frames =
            UserFramesOfStack(*stack, 1 + kDefaultCallSiteCallers);
        for (auto f = frames.rbegin(); f != frames.rend(); ++f) {
          stack_frames_.push_back({start, end, names_.Intern(kPythonFunctionDomain), names_.Intern(*f),
                                   static_cast<uint32_t>(tid), 0});
        }
      }
      break;
    }
    case Category::kOther:
      break;
  }
  if (e.cat.data() == cat.data()) {
    ++imported_known_[known];  // the name itself, not its 2021 capitalisation: no hash needed
  } else {
    Count(&imported_, e.cat);
  }
}

void KinetoMapper::VoteForPid(std::string_view pid) {
  // Nearly every call comes from one pid: counted in a run, folded into the map when it changes.
  if (pid_run_votes_ > 0 && pid == pid_run_) {
    ++pid_run_votes_;
    return;
  }
  EndPidRun();
  pid_run_.assign(pid);
  pid_run_votes_ = 1;
}

void KinetoMapper::EndPidRun() {
  if (pid_run_votes_ > 0) pid_votes_[pid_run_] += pid_run_votes_;
  pid_run_votes_ = 0;
}

void KinetoMapper::MapOpWork(const RawEvent& e, int64_t start, int64_t end, uint32_t tid) {
  const std::string_view* flops = e.FindArg("flops");
  if (flops == nullptr && e.input_dim_ends.empty()) return;
  const OpInputs inputs{e.input_dims, e.input_dim_ends, e.input_types};
  std::optional<OpWorkFigures> w;
  if (const std::string_view* source = e.FindArg("gpuspy work source"); source != nullptr) {
    // gpuspy's own export: the figures as the analysis had them, not recomputed.
    int64_t f = 0, b = 0;
    ToInt(flops == nullptr ? "" : *flops, &f);
    ToInt(e.Arg("gpuspy work bytes"), &b);
    v1::WorkSource named = v1::WORK_SOURCE_UNKNOWN;  // the exporter writes the enum's name
    v1::WorkSource_Parse(std::string(*source), &named);
    w = OpWorkFigures{static_cast<uint64_t>(std::max<int64_t>(0, f)), static_cast<uint64_t>(std::max<int64_t>(0, b)),
                      e.Arg("gpuspy work dtype"), static_cast<WorkSource>(named)};
  } else {
    w = OpWorkOf(e.name, flops == nullptr ? "" : *flops, inputs);
  }
  if (!w) return;
  // The type is interned when the read ends (Finish): a type name is no event's string, and the
  // events' own strings keep the refs they had before op work was read.
  StringRef dtype = 0;
  if (!w->dtype.empty()) {
    auto [it, added] = op_dtype_index_.try_emplace(std::string(w->dtype), op_dtypes_.size() + 1);
    if (added) op_dtypes_.push_back(it->first);
    dtype = static_cast<StringRef>(it->second);
  }
  out_->events.op_works.push_back({start, end, tid, names_.Intern(e.name), dtype, w->flops, w->bytes,
                                   w->source});
}

void KinetoMapper::MapMemorySample(const RawEvent& e) {
  int64_t ts = 0;
  if (!MicrosToNanos(e.ts, &ts)) {
    Skip("bad timestamp");
    return;
  }
  std::string why;
  std::optional<MemoryPoolEvent> sample =
      AllocatorSample(ts, [&](std::string_view key) { return e.FindArg(key); }, &why);
  if (!sample) {
    Skip(why);
    return;
  }
  out_->events.memory_pools.push_back(*sample);
  Count(&imported_, "[memory]");
}

void KinetoMapper::Finish() {
  for (auto& [k, n] : imported_) out_->stats.imported[k] += n;
  for (size_t i = 0; i < kKnownCategories.size(); ++i) {
    if (imported_known_[i] > 0) out_->stats.imported[std::string(kKnownCategories[i].name)] += imported_known_[i];
  }
  for (auto& [k, n] : skipped_) out_->stats.skipped[k] += n;
  for (size_t c = 0; c < skipped_phases_.size(); ++c) {
    if (skipped_phases_[c] == 0) continue;
    const char phase = static_cast<char>(c);
    out_->stats.skipped[PhaseReason(std::string_view(&phase, 1))] += skipped_phases_[c];
  }
  EndPidRun();
  out_->stats.cut_strings += names_.cut();
  // The profiled process: the pid that issued the CUDA calls (ties: the smallest pid text).
  const std::map<std::string, uint64_t> votes(pid_votes_.begin(), pid_votes_.end());
  std::string pid;
  uint64_t best = 0;
  for (const auto& [p, n] : votes) {
    if (n > best) {
      best = n;
      pid = p;
    }
  }
  int64_t n = 0;
  if (ToInt(pid, &n)) out_->identity.set_pid(static_cast<uint32_t>(n));
  // The profiled process's threads only (pid 0's "threads" are GPU streams).
  if (auto names = thread_names_.find(pid); names != thread_names_.end()) {
    for (const auto& [tid, name] : names->second) out_->thread_names[tid] = names_.Intern(name);
  }
  // Op work's types, after every event's and thread's string (MapOpWork).
  std::vector<StringRef> dtype_refs(op_dtypes_.size() + 1, 0);
  for (size_t i = 0; i < op_dtypes_.size(); ++i) dtype_refs[i + 1] = names_.Intern(op_dtypes_[i]);
  for (OpWorkEvent& w : out_->events.op_works) w.dtype = dtype_refs[w.dtype];
  // Trace files list events in any order; batches want time locality.
  auto by_start = [](auto& v) {
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  };
  EventColumns& ev = out_->events;
  if (base_ns_ != 0) {
    auto shift = [this](auto& v) {
      for (auto& e : v) {
        e.start_ns += base_ns_;
        e.end_ns += base_ns_;
      }
    };
    shift(ev.kernels);
    shift(ev.memcpys);
    shift(ev.memsets);
    shift(ev.syncs);
    shift(ev.apis);
    shift(ev.nvtx_ranges);
    shift(ev.graph_launches);
    shift(ev.op_works);
    for (MemoryPoolEvent& p : ev.memory_pools) p.timestamp_ns += base_ns_;
  }
  by_start(ev.kernels);
  by_start(ev.memcpys);
  by_start(ev.memsets);
  // A GPU record written twice (a trace merged from overlapping windows, a tool's double write)
  // would count its kernel twice: identical records are dropped, and counted as skipped.
  auto drop_duplicates = [this](auto& v, const char* why) {
    size_t kept = 0, run = 0;  // run: where the kept records with the current start begin
    for (size_t i = 0; i < v.size(); ++i) {
      if (kept > 0 && v[kept - 1].start_ns != v[i].start_ns) run = kept;
      bool seen = false;
      for (size_t j = run; j < kept && !seen; ++j) seen = v[j] == v[i];
      if (seen) {
        ++out_->stats.skipped[why];
        continue;
      }
      v[kept++] = v[i];
    }
    v.resize(kept);
  };
  drop_duplicates(ev.kernels, "duplicate kernel record");
  drop_duplicates(ev.memcpys, "duplicate memcpy record");
  drop_duplicates(ev.memsets, "duplicate memset record");
  by_start(ev.syncs);
  by_start(ev.apis);
  by_start(ev.nvtx_ranges);
  by_start(ev.graph_launches);
  by_start(ev.op_works);
  std::stable_sort(ev.memory_pools.begin(), ev.memory_pools.end(),
                   [](const auto& a, const auto& b) { return a.timestamp_ns < b.timestamp_ns; });
  if (base_ns_ != 0) {
    for (NvtxRangeEvent& r : stack_frames_) {
      r.start_ns += base_ns_;
      r.end_ns += base_ns_;
    }
  }
  AttachPythonCallSites(&ev, &out_->strings, stack_frames_);
  // Collectives in their kernels' order, which is time order.
  if (!ev.collectives.empty()) {
    absl::flat_hash_map<uint64_t, size_t> position;
    for (size_t i = 0; i < ev.kernels.size(); ++i) {
      position.try_emplace(ev.kernels[i].correlation_id, i);
    }
    std::stable_sort(ev.collectives.begin(), ev.collectives.end(),
                     [&](const CollectiveEvent& a, const CollectiveEvent& b) {
                       return position[a.correlation_id] < position[b.correlation_id];
                     });
  }
}

}  // namespace gpuspy::importers
