#include "importers/kineto/kineto_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <istream>
#include <limits>
#include <optional>
#include <sstream>
#include <streambuf>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "importers/kineto/memory_samples.h"
#include "model/dtypes.h"
#include "nlohmann/json.hpp"

namespace gpuspy::importers {
namespace {

// One trace event as it streams by: only what the mapping needs, scalars kept as text.
struct RawEvent {
  std::string ph, cat, name, ts, dur, pid, tid;
  std::map<std::string, std::string> args;
  std::vector<int64_t> grid, block;
  void Clear() { *this = RawEvent{}; }
  std::string Arg(const char* key) const {
    auto it = args.find(key);
    return it == args.end() ? std::string() : it->second;
  }
};

// `*out` changes only on success: absl::SimpleAtoi leaves what it parsed of "1.8e19" (1) behind.
bool ToInt(const std::string& s, int64_t* out) {
  int64_t n = 0;
  if (absl::SimpleAtoi(s, &n)) {
    *out = n;
    return true;
  }
  double d = 0;  // "7.0" style integers
  // Range first: converting a double beyond int64 (4e29, inf; NaN fails both tests) is undefined
  // behaviour, not a saturated value (found by tests/fuzz/kineto_trace_fuzz).
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (!absl::SimpleAtod(s, &d) || !(d >= -kTwoTo63 && d < kTwoTo63) || d != std::trunc(d)) {
    return false;
  }
  *out = static_cast<int64_t>(d);
  return true;
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
void ParseMemcpyName(const std::string& name, MemcpyEvent* m) {
  if (absl::StrContains(name, "HtoD")) m->copy_kind = CopyKind::kHtoD;
  else if (absl::StrContains(name, "DtoH")) m->copy_kind = CopyKind::kDtoH;
  else if (absl::StrContains(name, "DtoD")) m->copy_kind = CopyKind::kDtoD;
  else if (absl::StrContains(name, "PtoP")) m->copy_kind = CopyKind::kPtoP;
  else if (absl::StrContains(name, "HtoH")) m->copy_kind = CopyKind::kHtoH;
  const size_t open = name.find('('), arrow = name.find(" -> "), close = name.rfind(')');
  if (open != std::string::npos && arrow != std::string::npos && close != std::string::npos &&
      open < arrow && arrow < close) {
    m->src_kind = MemoryKindFromWord(std::string_view(name).substr(open + 1, arrow - open - 1));
    m->dst_kind = MemoryKindFromWord(std::string_view(name).substr(arrow + 4, close - arrow - 4));
  }
}

SyncKind SyncKindFrom(const std::string& kind) {
  if (kind == "Stream Sync") return SyncKind::kStream;
  if (kind == "Event Sync") return SyncKind::kEvent;
  if (kind == "Context Sync") return SyncKind::kContext;
  if (kind == "Stream Wait Event") return SyncKind::kStreamWaitEvent;
  return SyncKind::kUnknown;
}

// Elements x bytes per element; 0 when either is unknown or the product does not fit.
uint64_t MessageBytes(const std::string& nelems, uint32_t dtype_size) {
  int64_t n = 0;
  if (dtype_size == 0 || !ToInt(nelems, &n) || n <= 0) return 0;
  if (static_cast<uint64_t>(n) > std::numeric_limits<uint64_t>::max() / dtype_size) return 0;
  return static_cast<uint64_t>(n) * dtype_size;
}

// What a communication kernel moves, from the args PyTorch's profiler gives NCCL kernels
// ("Collective name", "In msg nelems", "dtype", "Process Group Name", "Group size", "Seq").
CollectiveEvent CollectiveOf(const RawEvent& e, uint64_t correlation, StringTable* s) {
  CollectiveEvent c;
  c.correlation_id = correlation;
  c.op = s->Intern(e.Arg("Collective name"));
  const std::string dtype = e.Arg("dtype");
  c.dtype = s->Intern(dtype);
  c.group = s->Intern(e.Arg("Process Group Name"));
  c.in_bytes = MessageBytes(e.Arg("In msg nelems"), DtypeSize(dtype));
  c.out_bytes = MessageBytes(e.Arg("Out msg nelems"), DtypeSize(dtype));
  int64_t v = 0;
  if (ToInt(e.Arg("Group size"), &v) && v > 0 && v <= std::numeric_limits<uint32_t>::max()) {
    c.group_size = static_cast<uint32_t>(v);
  }
  const std::string seq = e.args.contains("Seq") ? e.Arg("Seq") : e.Arg("seq");
  if (ToInt(seq, &v) && v >= 0) c.sequence = v;
  return c;
}

// "path/train.py(57): forward" (a with_stack=True python_function) -> "path/train.py:57 forward";
// empty for frames that are not the user's code (the interpreter, torch and other libraries),
// so that a call site names the line a user would change.
std::string UserCallSite(const std::string& frame) {
  static const char* const kNotUserCode[] = {
      "torch/", "site-packages/", "dist-packages/", "<built-in", "<frozen", "/lib/python3",
      "threading.py", "contextlib.py", "<string>"};
  const size_t open = frame.find('(');
  const size_t close = frame.find("): ");
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  const std::string file = frame.substr(0, open);
  int64_t line = 0;
  if (file.empty() || !absl::SimpleAtoi(frame.substr(open + 1, close - open - 1), &line) ||
      line <= 0) {
    return "";
  }
  for (const char* lib : kNotUserCode) {
    if (absl::StrContains(file, lib)) return "";
  }
  return absl::StrCat(file, ":", line, " ", frame.substr(close + 3));
}

// Each CUDA call's call site: the innermost user-code Python frame open around it on its thread.
// Needs `ev` sorted by start (python frames nest, so a per-thread stack sweep finds it).
void AttachPythonCallSites(EventColumns* ev, StringTable* strings) {
  const StringRef python = strings->Find(kPythonFunctionDomain);
  if (python == 0) return;
  absl::flat_hash_map<uint32_t, std::vector<const NvtxRangeEvent*>> frames_by_thread;
  for (const NvtxRangeEvent& r : ev->nvtx_ranges) {
    if (r.domain == python) frames_by_thread[r.thread_id].push_back(&r);
  }
  absl::flat_hash_map<StringRef, StringRef> site_of;  // frame name -> call site (0: not user code)
  auto site = [&](StringRef frame) {
    auto [it, fresh] = site_of.try_emplace(frame, 0);
    if (fresh) {
      const std::string s = UserCallSite(std::string(strings->Get(frame)));
      if (!s.empty()) it->second = strings->Intern(s);
    }
    return it->second;
  };
  struct Sweep {
    size_t next = 0;
    std::vector<const NvtxRangeEvent*> open;
  };
  absl::flat_hash_map<uint32_t, Sweep> sweeps;
  for (ApiEvent& a : ev->apis) {
    auto frames = frames_by_thread.find(a.thread_id);
    if (frames == frames_by_thread.end()) continue;
    Sweep& sw = sweeps[a.thread_id];
    const auto& f = frames->second;
    while (sw.next < f.size() && f[sw.next]->start_ns <= a.start_ns) {
      while (!sw.open.empty() && sw.open.back()->end_ns <= f[sw.next]->start_ns) sw.open.pop_back();
      sw.open.push_back(f[sw.next++]);
    }
    // Frames that ended before this call began enclose no later call either.
    while (!sw.open.empty() && sw.open.back()->end_ns <= a.start_ns) sw.open.pop_back();
    for (auto it = sw.open.rbegin(); it != sw.open.rend(); ++it) {
      if ((*it)->end_ns < a.end_ns) continue;  // a sibling that closed inside the call
      if (StringRef s = site((*it)->message); s != 0) {
        a.call_site = s;
        break;
      }
    }
  }
}

class Importer : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit Importer(KinetoTrace* out) : out_(out) {}

  bool null() override { return Scalar(""); }
  bool boolean(bool v) override { return Scalar(v ? "true" : "false"); }
  bool number_integer(number_integer_t v) override { return Scalar(std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Scalar(std::to_string(v)); }
  bool number_float(number_float_t, const string_t& s) override { return Scalar(s); }
  bool string(string_t& v) override { return Scalar(v); }
  bool binary(binary_t&) override { return true; }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool start_object(std::size_t) override { return Open(false); }
  bool start_array(std::size_t) override { return Open(true); }
  bool end_array() override { return Close(); }
  bool end_object() override {
    if (At({"", "traceEvents", "#"})) {
      ++out_->stats.trace_events;
      Map();
      event_.Clear();
    } else if (At({"", "deviceProperties", "#"})) {
      out_->identity.add_devices()->Swap(&device_);
      device_.Clear();
    }
    return Close();
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    error_ = absl::InvalidArgumentError(
        absl::StrCat("not valid trace JSON at byte ", position, ": ", ex.what()));
    return false;
  }

  const absl::Status& error() const { return error_; }
  void Finish();

 private:
  bool Open(bool array) {
    path_.push_back(path_.empty() ? "" : (arrays_.back() ? "#" : key_));
    arrays_.push_back(array);
    return true;
  }
  bool Close() {
    path_.pop_back();
    arrays_.pop_back();
    return true;
  }
  bool At(std::initializer_list<const char*> p) const {
    if (path_.size() != p.size()) return false;
    size_t i = 0;
    for (const char* s : p) {
      if (path_[i++] != s) return false;
    }
    return true;
  }

  bool Scalar(const std::string& v) {
    if (At({"", "traceEvents", "#"})) {
      if (key_ == "ph") event_.ph = v;
      else if (key_ == "cat") event_.cat = v;
      else if (key_ == "name") event_.name = v;
      else if (key_ == "ts") event_.ts = v;
      else if (key_ == "dur") event_.dur = v;
      else if (key_ == "pid") event_.pid = v;
      else if (key_ == "tid") event_.tid = v;
    } else if (At({"", "traceEvents", "#", "args"})) {
      event_.args[key_] = v;
    } else if (At({"", "traceEvents", "#", "args", "grid"}) ||
               At({"", "traceEvents", "#", "args", "block"})) {
      int64_t n = 0;
      if (ToInt(v, &n)) (path_.back() == "grid" ? event_.grid : event_.block).push_back(n);
    } else if (At({"", "deviceProperties", "#"})) {
      int64_t n = 0;
      if (key_ == "id" && ToInt(v, &n)) device_.set_id(static_cast<uint32_t>(n));
      else if (key_ == "name") device_.set_name(v);
      else if (key_ == "totalGlobalMem" && ToInt(v, &n)) device_.set_global_memory_bytes(n);
      else if (key_ == "computeMajor" && ToInt(v, &n)) device_.set_compute_capability_major(n);
      else if (key_ == "computeMinor" && ToInt(v, &n)) device_.set_compute_capability_minor(n);
      else if (key_ == "numSms" && ToInt(v, &n)) device_.set_sm_count(static_cast<uint32_t>(n));
    } else if (At({""}) && key_ == "baseTimeNanoseconds") {
      // Newer Kineto (and gpuspy export) write ts relative to this base.
      int64_t n = 0;
      if (ToInt(v, &n)) base_ns_ = n;
    } else if (At({"", "distributedInfo"})) {
      int64_t n = 0;
      if (key_ == "rank" && ToInt(v, &n)) out_->identity.set_rank(static_cast<int32_t>(n));
      else if (key_ == "world_size" && ToInt(v, &n)) out_->identity.set_world_size(static_cast<int32_t>(n));
    }
    return true;
  }

  void Skip(const std::string& why) { ++out_->stats.skipped[why]; }

  void Map();
  void MapMemorySample();

  KinetoTrace* out_;
  RawEvent event_;
  v1::Device device_;
  std::vector<std::string> path_;
  std::vector<bool> arrays_;
  std::string key_;
  absl::Status error_;
  std::map<std::string, uint64_t> pid_votes_;
  int64_t base_ns_ = 0;
};

void Importer::Map() {
  const RawEvent& e = event_;
  if (e.name == "[memory]") {  // an instant event ("ph": "i") with the allocator's totals
    MapMemorySample();
    return;
  }
  if (e.ph != "X") {
    Skip(e.ph.empty() ? "no phase" : "phase " + e.ph);
    return;
  }
  static const std::set<std::string> kMapped = {
      "kernel",          "gpu_memcpy", "gpu_memset",      "cuda_runtime", "cuda_driver",
      "cuda_sync",       "user_annotation", "cpu_op",     "python_function", "Trace",
      "cuda_profiler_range"};
  if (!kMapped.contains(e.cat)) {
    Skip(e.cat.empty() ? "no category" : e.cat);
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
  int64_t corr = 0, device = 0, context = 0, stream = 0, tid = 0;
  ToInt(e.Arg("correlation"), &corr);
  ToInt(e.Arg("device"), &device);
  ToInt(e.Arg("context"), &context);
  ToInt(e.Arg("stream"), &stream);
  ToInt(e.tid, &tid);
  const StreamKey key{static_cast<uint32_t>(device), static_cast<uint32_t>(context),
                      static_cast<uint32_t>(stream)};
  EventColumns& ev = out_->events;
  StringTable& s = out_->strings;
  if (e.cat == "kernel" && e.args.contains("whole graph")) {  // gpuspy's export of a graph record
    int64_t graph = 0;
    ToInt(e.Arg("graph id"), &graph);
    ev.graph_launches.push_back({start, end, static_cast<uint64_t>(corr), key,
                                 static_cast<uint32_t>(graph)});
  } else if (e.cat == "kernel") {
    KernelEvent k;
    k.start_ns = start;
    k.end_ns = end;
    k.correlation_id = static_cast<uint64_t>(corr);
    k.name = s.Intern(e.name);
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
    if (e.args.contains("Collective name")) {
      ev.collectives.push_back(CollectiveOf(e, k.correlation_id, &s));
      ++out_->stats.collectives;
    }
  } else if (e.cat == "gpu_memcpy") {
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
  } else if (e.cat == "gpu_memset") {
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
  } else if (e.cat == "cuda_runtime" || e.cat == "cuda_driver") {
    ApiEvent a;
    a.start_ns = start;
    a.end_ns = end;
    a.correlation_id = static_cast<uint64_t>(corr);
    a.domain = e.cat == "cuda_driver" ? ApiDomain::kDriver : ApiDomain::kRuntime;
    int64_t cbid = 0;
    ToInt(e.Arg("cbid"), &cbid);
    a.cbid = static_cast<uint32_t>(cbid);
    a.name = s.Intern(e.name);
    a.thread_id = static_cast<uint32_t>(tid);
    ev.apis.push_back(a);
    ++pid_votes_[e.pid];
  } else if (e.cat == "cuda_sync") {
    SyncEvent y;
    y.start_ns = start;
    y.end_ns = end;
    y.correlation_id = static_cast<uint64_t>(corr);
    y.stream = key;
    y.sync_kind = SyncKindFrom(e.Arg("cuda_sync_kind").empty() ? e.name : e.Arg("cuda_sync_kind"));
    ev.syncs.push_back(y);
  } else {  // host ranges: record_function (ProfilerStep#N among them), ATen ops, Python frames
    const std::string_view domain = e.cat == "Trace" ? kCaptureDomain : std::string_view(e.cat);
    ev.nvtx_ranges.push_back({start, end, s.Intern(domain), s.Intern(e.name),
                              static_cast<uint32_t>(tid), 0});
  }
  ++out_->stats.imported[e.cat];
}

void Importer::MapMemorySample() {
  int64_t ts = 0;
  if (!MicrosToNanos(event_.ts, &ts)) {
    Skip("bad timestamp");
    return;
  }
  std::string why;
  std::optional<MemoryPoolEvent> sample = AllocatorSample(ts, event_.args, &why);
  if (!sample) {
    Skip(why);
    return;
  }
  out_->events.memory_pools.push_back(*sample);
  ++out_->stats.imported["[memory]"];
}

void Importer::Finish() {
  // The profiled process: the pid that issued the CUDA calls.
  std::string pid;
  uint64_t best = 0;
  for (const auto& [p, n] : pid_votes_) {
    if (n > best) {
      best = n;
      pid = p;
    }
  }
  int64_t n = 0;
  if (ToInt(pid, &n)) out_->identity.set_pid(static_cast<uint32_t>(n));
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
    for (MemoryPoolEvent& p : ev.memory_pools) p.timestamp_ns += base_ns_;
  }
  by_start(ev.kernels);
  by_start(ev.memcpys);
  by_start(ev.memsets);
  by_start(ev.syncs);
  by_start(ev.apis);
  by_start(ev.nvtx_ranges);
  by_start(ev.graph_launches);
  std::stable_sort(ev.memory_pools.begin(), ev.memory_pools.end(),
                   [](const auto& a, const auto& b) { return a.timestamp_ns < b.timestamp_ns; });
  AttachPythonCallSites(&ev, &out_->strings);
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

// A std::streambuf over zlib's gz reader, which reads gzip and plain files alike.
class GzStreamBuf : public std::streambuf {
 public:
  explicit GzStreamBuf(gzFile f) : f_(f) {}
  int last_error() const { return error_; }

 protected:
  int_type underflow() override {
    const int n = gzread(f_, buf_, sizeof(buf_));
    if (n <= 0) {
      int err = Z_OK;
      gzerror(f_, &err);
      if (n < 0 || (err != Z_OK && err != Z_STREAM_END)) error_ = err != Z_OK ? err : Z_DATA_ERROR;
      return traits_type::eof();
    }
    setg(buf_, buf_, buf_ + n);
    return traits_type::to_int_type(buf_[0]);
  }

 private:
  gzFile f_;
  char buf_[1 << 16];
  int error_ = Z_OK;
};

// JSON's whitespace: what may come before the opening '{' of a trace.
bool IsJsonSpace(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// A trace is a JSON object. The parser takes a NUL byte for the end of its input, so a file of
// zeros (or any binary file starting with one) was reported as "unexpected end of input at byte
// 1"; say what the file is not instead.
absl::Status CheckStartsLikeJson(std::istream& in) {
  int c = in.peek();
  while (c != std::char_traits<char>::eof() && IsJsonSpace(c)) {
    in.get();
    c = in.peek();
  }
  if (c == std::char_traits<char>::eof()) {
    return absl::InvalidArgumentError("the file is empty: not a PyTorch profiler (Kineto) trace");
  }
  if (c != '{' && c != '[') {  // '[': JSON, left to the parser and the traceEvents check
    return absl::InvalidArgumentError(absl::StrCat(
        "not JSON (starts with byte 0x", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2),
        "; a trace starts with '{'): not a PyTorch profiler (Kineto) trace"));
  }
  return absl::OkStatus();
}

absl::StatusOr<KinetoTrace> Parse(std::istream& in, const std::function<absl::Status()>& io_error) {
  if (absl::Status st = CheckStartsLikeJson(in); !st.ok()) {
    if (absl::Status io = io_error(); !io.ok()) return io;
    return st;
  }
  KinetoTrace out;
  out.identity.set_rank(-1);
  out.identity.set_local_rank(-1);
  Importer importer(&out);
  const bool ok = nlohmann::json::sax_parse(in, &importer);
  if (absl::Status io = io_error(); !io.ok()) return io;
  if (!ok) return importer.error().ok() ? absl::InvalidArgumentError("not valid trace JSON") : importer.error();
  if (out.stats.trace_events == 0) {
    return absl::InvalidArgumentError("no traceEvents: not a PyTorch profiler (Kineto) trace");
  }
  importer.Finish();
  return out;
}

}  // namespace

bool MicrosToNanos(const std::string& text, int64_t* ns) {
  if (text.empty()) return false;
  const bool negative = text[0] == '-';
  const std::string body = negative ? text.substr(1) : text;
  const size_t dot = body.find('.');
  const std::string whole = body.substr(0, dot);
  std::string frac = dot == std::string::npos ? "" : body.substr(dot + 1);
  if (frac.find_first_of("eE") != std::string::npos || whole.empty()) {
    double d = 0;  // exponent notation: rare, accept double precision
    if (!absl::SimpleAtod(text, &d)) return false;
    *ns = static_cast<int64_t>(d * 1000.0);
    return true;
  }
  int64_t us = 0;
  if (!absl::SimpleAtoi(whole, &us)) return false;
  frac = (frac + "000").substr(0, 3);  // ns resolution; finer digits are dropped
  int64_t sub = 0;
  if (!absl::SimpleAtoi(frac, &sub)) return false;
  if (us > INT64_MAX / 1000 - 1) return false;
  *ns = us * 1000 + sub;
  if (negative) *ns = -*ns;
  return true;
}

absl::StatusOr<KinetoTrace> ParseKinetoTrace(const std::string& json) {
  std::istringstream in(json);
  return Parse(in, [] { return absl::OkStatus(); });
}

absl::StatusOr<KinetoTrace> ReadKinetoTrace(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  gzbuffer(f, 1 << 17);
  GzStreamBuf buf(f);
  std::istream in(&buf);
  absl::StatusOr<KinetoTrace> trace = Parse(in, [&]() -> absl::Status {
    if (buf.last_error() == Z_OK) return absl::OkStatus();
    return absl::DataLossError("truncated or corrupt gzip stream");
  });
  gzclose(f);
  if (!trace.ok()) {
    return absl::Status(trace.status().code(), absl::StrCat(path, ": ", trace.status().message()));
  }
  return trace;
}

}  // namespace gpuspy::importers
