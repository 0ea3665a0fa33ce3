#include "exporters/chrome_trace/chrome_trace_stream.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "analysis/detector_names.h"
#include "model/dtypes.h"
#include "model/events.h"
#include "nlohmann/json.hpp"

namespace gpuspy::exporters {

using analysis::DetectorName;
using analysis::SeverityName;

namespace {

using nlohmann::json;

// Host threads keep their OS tid; GPU streams get tids that cannot collide with them.
constexpr int64_t kStreamTidBase = 1'000'000'000;
constexpr int64_t kStepsTid = kStreamTidBase - 1;

int64_t StreamTid(const v1::StreamRef& s) {
  return kStreamTidBase + static_cast<int64_t>(s.device_id()) * 100'000 + s.stream_id();
}

const char* MemoryWord(v1::MemoryKind k) {
  switch (k) {
    case v1::MEMORY_KIND_PAGEABLE: return "Pageable";
    case v1::MEMORY_KIND_PINNED: return "Pinned";
    case v1::MEMORY_KIND_DEVICE: return "Device";
    case v1::MEMORY_KIND_MANAGED: return "Managed";
    case v1::MEMORY_KIND_ARRAY: return "Array";
    default: return "Unknown";
  }
}

const char* CopyWord(v1::CopyKind k) {
  switch (k) {
    case v1::COPY_KIND_HTOD: return "HtoD";
    case v1::COPY_KIND_DTOH: return "DtoH";
    case v1::COPY_KIND_DTOD: return "DtoD";
    case v1::COPY_KIND_PTOP: return "PtoP";
    case v1::COPY_KIND_HTOH: return "HtoH";
    default: return "Unknown";
  }
}

const char* SyncWord(v1::SyncKind k) {
  switch (k) {
    case v1::SYNC_KIND_EVENT: return "Event Sync";
    case v1::SYNC_KIND_STREAM_WAIT_EVENT: return "Stream Wait Event";
    case v1::SYNC_KIND_CONTEXT: return "Context Sync";
    default: return "Stream Sync";
  }
}

// Kineto's category for a host range: imported host ops keep theirs (so that a re-import reads
// them back as they were); live NVTX ranges are record_function-like annotations.
std::string HostRangeCategory(const std::string& domain) {
  if (domain == kCpuOpDomain || domain == kPythonFunctionDomain ||
      domain == kRangeProfilerDomain) {
    return domain;
  }
  if (domain == kCaptureDomain) return "Trace";
  return std::string(kUserAnnotationDomain);
}

// A collective's args on its kernel, named as PyTorch's profiler names them (so that an import
// reads them back), plus the byte sizes, which are what gpuspy knows for certain.
void AddCollectiveArgs(const v1::Collective& c, json* args) {
  json& a = *args;
  a["Collective name"] = c.op();
  if (!c.dtype().empty()) a["dtype"] = c.dtype();
  a["In msg bytes"] = c.in_bytes();
  a["Out msg bytes"] = c.out_bytes();
  if (const uint32_t size = DtypeSize(c.dtype());
      size > 0 && c.in_bytes() % size == 0 && c.out_bytes() % size == 0) {
    a["In msg nelems"] = c.in_bytes() / size;
    a["Out msg nelems"] = c.out_bytes() / size;
  }
  if (c.group_size() > 0) a["Group size"] = c.group_size();
  if (!c.group().empty()) a["Process Group Name"] = c.group();
  if (c.sequence() >= 0) a["Seq"] = c.sequence();
}

int64_t PidOf(const ExportedProcess& p) { return p.identity.pid() != 0 ? p.identity.pid() : 1; }

json StreamArgs(const v1::StreamRef& s, uint64_t corr) {
  return json{{"device", s.device_id()}, {"context", s.context_id()}, {"stream", s.stream_id()},
              {"correlation", corr}};
}

}  // namespace

void ChromeTraceStream::Write(std::string_view s) {
  buffer_.append(s);
  if (buffer_.size() >= kFlushBytes) Flush();
}

void ChromeTraceStream::Flush() {
  if (ok_ && !buffer_.empty()) {
    ok_ = out_(buffer_);
    bytes_ += buffer_.size();
  }
  buffer_.clear();
}

void ChromeTraceStream::Emit(const json& e) {
  Write(first_ ? "\n  " : ",\n  ");
  Write(e.dump());
  first_ = false;
  ++count_;
}

void ChromeTraceStream::Meta(const char* what, int64_t pid, int64_t tid, const std::string& name) {
  Emit({{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
}

json ChromeTraceStream::Span(const std::string& cat, const std::string& name, int64_t pid,
                             int64_t tid, int64_t start, int64_t end) const {
  return {{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", pid}, {"tid", tid},
          {"ts", Us(start)}, {"dur", static_cast<double>(end - start) / 1000.0}};
}

int64_t ChromeTraceStream::StreamTrack(int64_t pid, const v1::StreamRef& s) {
  const int64_t tid = StreamTid(s);
  if (streams_named_.insert({pid, tid}).second) {
    Meta("thread_name", pid, tid, absl::StrCat("GPU ", s.device_id(), " stream ", s.stream_id()));
  }
  return tid;
}

int64_t ChromeTraceStream::HostTrack(const ExportedProcess& p, int64_t pid, int64_t tid) {
  if (hosts_named_.insert({pid, tid}).second) {
    const bool main = p.identity.pid() != 0 && static_cast<int64_t>(p.identity.pid()) == tid;
    Meta("thread_name", pid, tid, absl::StrCat(main ? "main thread " : "thread ", tid));
  }
  return tid;
}

void ChromeTraceStream::Begin(const std::vector<ExportedProcess>& processes) {
  Write(absl::StrCat("{\n\"schemaVersion\": 1,\n\"baseTimeNanoseconds\": ", base_ns_,
                     ",\n\"displayTimeUnit\": \"ns\",\n"));
  if (processes.size() == 1 && processes[0].identity.rank() >= 0) {
    const json info = {{"rank", processes[0].identity.rank()},
                       {"world_size", processes[0].identity.world_size()}};
    Write(absl::StrCat("\"distributedInfo\": ", info.dump(), ",\n"));
  }
  json devices = json::array();
  std::set<uint32_t> seen;
  for (const auto& p : processes) {
    for (const auto& d : p.identity.devices()) {
      if (!seen.insert(d.id()).second) continue;
      devices.push_back({{"id", d.id()}, {"name", d.name()}, {"totalGlobalMem", d.global_memory_bytes()},
                         {"computeMajor", d.compute_capability_major()},
                         {"computeMinor", d.compute_capability_minor()}, {"numSms", d.sm_count()}});
    }
  }
  Write(absl::StrCat("\"deviceProperties\": ", devices.dump(), ",\n\"traceEvents\": ["));
}

void ChromeTraceStream::BeginProcess(const ExportedProcess& p) {
  pending_.clear();
  const auto& id = p.identity;
  Meta("process_name", PidOf(p), 0,
       absl::StrCat(id.rank() >= 0 ? absl::StrCat("rank ", id.rank(), " · ") : "", id.host(),
                    " · pid ", id.pid()));
}

void ChromeTraceStream::Events(const ExportedProcess& p, const std::vector<v1::Event>& events) {
  const int64_t pid = PidOf(p);
  std::unordered_map<uint64_t, const v1::Collective*> collectives;  // by correlation id
  std::unordered_set<uint64_t> used;  // those of `collectives` a kernel of this call took
  // An op's work goes onto its cpu_op span as args (same thread, start, end and name), which an
  // import reads back as the same work (importers/kineto/kineto_mapping.cc, MapOpWork).
  std::map<std::tuple<uint32_t, int64_t, int64_t, std::string>, const v1::OpWork*> works;
  for (const v1::Event& e : events) {
    if (e.has_collective()) collectives.emplace(e.collective().correlation_id(), &e.collective());
    if (e.has_op_work()) {
      const v1::OpWork& w = e.op_work();
      works.emplace(std::tuple(w.thread_id(), w.start_ns(), w.end_ns(), w.op()), &w);
    }
  }
  for (const v1::Event& e : events) {
    switch (e.kind_case()) {
      case v1::Event::kKernel: {
        const auto& k = e.kernel();
        json j = Span("kernel", k.name(), pid, StreamTrack(pid, k.stream()), k.start_ns(), k.end_ns());
        j["args"] = StreamArgs(k.stream(), k.correlation_id());
        j["args"]["grid"] = {k.grid_x(), k.grid_y(), k.grid_z()};
        j["args"]["block"] = {k.block_x(), k.block_y(), k.block_z()};
        j["args"]["registers per thread"] = k.registers_per_thread();
        j["args"]["shared memory"] = k.static_shared_bytes();
        if (k.graph_id() != 0) j["args"]["graph id"] = k.graph_id();
        if (auto c = collectives.find(k.correlation_id()); c != collectives.end()) {
          AddCollectiveArgs(*c->second, &j["args"]);
          used.insert(k.correlation_id());
        } else if (auto d = pending_.find(k.correlation_id()); d != pending_.end()) {
          AddCollectiveArgs(d->second, &j["args"]);
          pending_.erase(d);
        }
        Emit(j);
        // Flow end: the launch call's arrow lands here.
        Emit({{"ph", "f"}, {"bp", "e"}, {"cat", "ac2g"}, {"name", "ac2g"}, {"id", k.correlation_id()},
              {"pid", pid}, {"tid", StreamTid(k.stream())}, {"ts", Us(k.start_ns())}});
        break;
      }
      case v1::Event::kGraphLaunch: {
        // A whole-graph record (no per-node kernels): a kernel-like span, marked so that an
        // import reads it back as the graph launch it is.
        const auto& g = e.graph_launch();
        json j = Span("kernel", "CUDA graph " + std::to_string(g.graph_id()), pid,
                      StreamTrack(pid, g.stream()), g.start_ns(), g.end_ns());
        j["args"] = StreamArgs(g.stream(), g.correlation_id());
        j["args"]["graph id"] = g.graph_id();
        j["args"]["whole graph"] = 1;
        Emit(j);
        break;
      }
      case v1::Event::kMemcpy: {
        const auto& m = e.memcpy();
        json j = Span("gpu_memcpy",
                      absl::StrCat("Memcpy ", CopyWord(m.copy_kind()), " (", MemoryWord(m.src_kind()),
                                   " -> ", MemoryWord(m.dst_kind()), ")"),
                      pid, StreamTrack(pid, m.stream()), m.start_ns(), m.end_ns());
        j["args"] = StreamArgs(m.stream(), m.correlation_id());
        j["args"]["bytes"] = m.bytes();
        Emit(j);
        break;
      }
      case v1::Event::kMemset: {
        const auto& m = e.memset();
        json j = Span("gpu_memset", absl::StrCat("Memset (", MemoryWord(m.memory_kind()), ")"), pid,
                      StreamTrack(pid, m.stream()), m.start_ns(), m.end_ns());
        j["args"] = StreamArgs(m.stream(), m.correlation_id());
        j["args"]["bytes"] = m.bytes();
        Emit(j);
        break;
      }
      case v1::Event::kSync: {
        const auto& y = e.sync();
        json j = Span("cuda_sync", SyncWord(y.sync_kind()), pid, StreamTrack(pid, y.stream()),
                      y.start_ns(), y.end_ns());
        j["args"] = StreamArgs(y.stream(), y.correlation_id());
        j["args"]["cuda_sync_kind"] = SyncWord(y.sync_kind());
        Emit(j);
        break;
      }
      case v1::Event::kApi: {
        const auto& a = e.api();
        json j = Span(a.domain() == v1::API_DOMAIN_DRIVER ? "cuda_driver" : "cuda_runtime", a.name(),
                      pid, HostTrack(p, pid, a.thread_id()), a.start_ns(), a.end_ns());
        j["args"] = {{"cbid", a.cbid()}, {"correlation", a.correlation_id()}};
        if (!a.call_site().empty()) j["args"]["call site"] = a.call_site();
        Emit(j);
        Emit({{"ph", "s"}, {"cat", "ac2g"}, {"name", "ac2g"}, {"id", a.correlation_id()},
              {"pid", pid}, {"tid", a.thread_id()}, {"ts", Us(a.start_ns())}});
        break;
      }
      case v1::Event::kNvtxRange: {
        const auto& r = e.nvtx_range();
        json j = Span(HostRangeCategory(r.domain()), r.message(), pid, HostTrack(p, pid, r.thread_id()),
                      r.start_ns(), r.end_ns());
        if (auto w = works.find(std::tuple(r.thread_id(), r.start_ns(), r.end_ns(), r.message()));
            w != works.end()) {
          j["args"] = {{"flops", w->second->flops()},
                       {"gpuspy work bytes", w->second->bytes()},
                       {"gpuspy work dtype", w->second->dtype()},
                       {"gpuspy work source", v1::WorkSource_Name(w->second->source())}};
          works.erase(w);
        }
        Emit(j);
        break;
      }
      case v1::Event::kNvtxMark: {
        const auto& m = e.nvtx_mark();
        // Written, but as instant events, which an import skips: a re-import lacks them too.
        ++not_exported_["NVTX marks and host samples (instant events, not read back by an import)"];
        // Host samples keep their own category: Perfetto can filter them from NVTX marks.
        Emit({{"ph", "i"}, {"s", "t"},
              {"cat", m.domain() == kHostSampleDomain ? "gpuspy_host_sample" : "gpuspy_mark"},
              {"name", m.message()}, {"pid", pid},
              {"tid", HostTrack(p, pid, m.thread_id())}, {"ts", Us(m.timestamp_ns())}});
        break;
      }
      case v1::Event::kMemoryPool: {
        // Allocator usage samples go back out as the profiler's [memory] events they came from
        // (the host thread is not kept: thread 0). CUDA pool operations have no counterpart.
        const auto& m = e.memory_pool();
        if (m.op() != v1::MEMORY_POOL_OP_USAGE) {
          ++not_exported_["CUDA memory pool operations"];
          break;
        }
        Emit({{"ph", "i"}, {"s", "t"}, {"cat", "cpu_instant_event"}, {"name", "[memory]"},
              {"pid", pid}, {"tid", 0}, {"ts", Us(m.timestamp_ns())},
              {"args", {{"Device Type", 1}, {"Device Id", m.device_id()},
                        {"Total Reserved", m.size()}, {"Total Allocated", m.utilized_bytes()}}}});
        break;
      }
      case v1::Event::kMemory:
        ++not_exported_["device memory allocation/free records"];
        break;
      case v1::Event::kOverhead:
        ++not_exported_["CUPTI overhead records"];
        break;
      case v1::Event::kExternalCorrelation:
        ++not_exported_["external correlation records"];
        break;
      case v1::Event::kOpWork:
        break;  // onto its op's span, above
      case v1::Event::kCounterSample: {
        // A counter track per device (Perfetto draws one line per reading); an import does not
        // read them back.
        const auto& c = e.counter_sample();
        ++not_exported_["hardware counter samples (counter tracks, not read back by an import)"];
        json args = json::object();
        const std::pair<const char*, float> readings[] = {
            {"tensor pipes busy %", c.tensor_active_pct()},
            {"DRAM % of peak bandwidth", c.dram_throughput_pct()},
            {"SMs active %", c.sm_active_pct()},
            {"GPU busy %", c.gpu_active_pct()}};
        for (const auto& [name, value] : readings) {
          if (value >= 0) args[name] = value;
        }
        Emit({{"ph", "C"}, {"name", "GPU " + std::to_string(c.device_id()) + " counters"},
              {"pid", pid}, {"ts", Us(c.start_ns())}, {"args", std::move(args)}});
        break;
      }
      default:
        break;  // collectives: onto their kernels, above
    }
  }
  if (!works.empty()) not_exported_["op work records without an exported op range"] += works.size();
  // A page may end between a batch's collectives (untimed: first in its batch's order) and their
  // kernels: a later call may still need them. Kept until their kernel comes, so what is held is
  // the collectives of the batch being written, not of the process.
  for (const auto& [correlation, c] : collectives) {
    if (!used.contains(correlation)) pending_.insert_or_assign(correlation, *c);
  }
}

void ChromeTraceStream::EndProcess(const ExportedProcess& p) {
  const int64_t pid = PidOf(p);
  // Their args travel on their kernel: without it there is nowhere to put them.
  if (!pending_.empty()) not_exported_["collective records without an exported kernel"] += pending_.size();
  pending_.clear();
  if (!p.steps.empty()) Meta("thread_name", pid, kStepsTid, "gpuspy steps");
  for (const v1::StepReport& r : p.steps) {
    const auto& s = r.step();
    json step = Span("gpuspy_step", absl::StrCat("step ", s.number(), " · ", DetectorName(r.primary_bottleneck())),
                     pid, kStepsTid, s.start_ns(), s.end_ns());
    step["args"] = {{"source", s.source()}, {"steady", r.steady_state()},
                    {"gpu busy ns", r.breakdown().gpu_busy_ns()}};
    Emit(step);
    for (const v1::Finding& f : r.findings()) {
      json args = {{"detector", DetectorName(f.detector())}, {"severity", SeverityName(f.severity())},
                   {"lost ms", static_cast<double>(f.lost_ns()) / 1e6}, {"fix", f.fix_hint()}};
      for (const auto& ev : f.evidence()) args[ev.key()] = ev.value();
      Emit({{"ph", "i"}, {"s", "t"}, {"cat", "gpuspy_finding"}, {"name", f.title()}, {"pid", pid},
            {"tid", kStepsTid}, {"ts", Us(s.start_ns())}, {"args", args}});
    }
  }
}

bool ChromeTraceStream::End() {
  Write("\n]");
  if (!not_exported_.empty()) {
    // After traceEvents, where readers of the format look for nothing: `gpuspy import` reads it
    // back to say why the re-imported job has fewer events than the exported one.
    json counts = json::object();
    for (const auto& [what, n] : not_exported_) counts[what] = n;
    Write(",\n\"gpuspyNotExported\": ");
    Write(counts.dump());
  }
  Write("}\n");
  Flush();
  return ok_;
}

void ProcessByProcess::OpenUntil(uint64_t process_id) {
  while (next_ < processes_->size() && (open_ == nullptr || open_->process_id < process_id)) {
    if (open_ != nullptr) stream_->EndProcess(*open_);
    open_ = &(*processes_)[next_++];
    stream_->BeginProcess(*open_);
  }
}

void ProcessByProcess::Events(uint64_t process_id, const std::vector<v1::Event>& events) {
  OpenUntil(process_id);
  if (open_ != nullptr && open_->process_id == process_id) stream_->Events(*open_, events);
}

void ProcessByProcess::Page(v1::GetEventsResponse* page) {
  std::vector<v1::Event> events;
  for (v1::ProcessEvents& p : *page->mutable_processes()) {
    events.assign(std::make_move_iterator(p.mutable_events()->begin()),
                  std::make_move_iterator(p.mutable_events()->end()));
    Events(p.process_id(), events);
  }
  page->clear_processes();
}

void ProcessByProcess::Finish() {
  OpenUntil(std::numeric_limits<uint64_t>::max());
  if (open_ != nullptr) stream_->EndProcess(*open_);
  open_ = nullptr;
}

int64_t EarliestNs(const std::vector<ExportedProcess>& processes) {
  int64_t lo = std::numeric_limits<int64_t>::max();
  for (const auto& p : processes) {
    for (const auto& e : p.events) {
      switch (e.kind_case()) {
        case v1::Event::kKernel: lo = std::min(lo, e.kernel().start_ns()); break;
        case v1::Event::kMemcpy: lo = std::min(lo, e.memcpy().start_ns()); break;
        case v1::Event::kMemset: lo = std::min(lo, e.memset().start_ns()); break;
        case v1::Event::kSync: lo = std::min(lo, e.sync().start_ns()); break;
        case v1::Event::kApi: lo = std::min(lo, e.api().start_ns()); break;
        case v1::Event::kNvtxRange: lo = std::min(lo, e.nvtx_range().start_ns()); break;
        case v1::Event::kNvtxMark: lo = std::min(lo, e.nvtx_mark().timestamp_ns()); break;
        case v1::Event::kMemoryPool: lo = std::min(lo, e.memory_pool().timestamp_ns()); break;
        default: break;
      }
    }
    for (const auto& r : p.steps) lo = std::min(lo, r.step().start_ns());
  }
  return lo == std::numeric_limits<int64_t>::max() ? 0 : lo;
}

// The document, into any sink.
int64_t PagedBaseNs(const v1::GetEventsResponse& first_page,
                    const std::vector<ExportedProcess>& processes) {
  int64_t base = first_page.earliest_ns();  // 0: nothing stored
  for (const ExportedProcess& p : processes) {
    for (const v1::StepReport& r : p.steps) {
      base = base == 0 ? r.step().start_ns() : std::min(base, r.step().start_ns());
    }
  }
  return base;
}

}  // namespace gpuspy::exporters
