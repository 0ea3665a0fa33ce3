#include "analysis/step_timeline.h"

#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/idle_attribution.h"
#include "analysis/nvtx_rows.h"
#include "model/units.h"

namespace gpuspy::analysis {
namespace {

// Order matters: the viewer indexes its colours and labels by these positions.
enum Kind { kKernel, kMemcpy, kMemset, kSync, kApi, kNvtx, kMark, kOverhead, kGraph };
constexpr const char* kKindNames[] = {"kernel", "memcpy", "memset",   "sync", "api",
                                      "nvtx",   "mark",   "overhead", "graph"};
// Indexes of TimelineIdleSpan.cause, in the order the viewer's legend lists them.
constexpr const char* kIdleCauseNames[] = {"sync_blocked", "launch_bound", "input", "host_other",
                                           "cuda_call"};

// absl here predates std::string_view interop in StrCat.
absl::string_view Str(std::string_view s) { return absl::string_view(s.data(), s.size()); }

const char* CopyKindName(CopyKind k) {
  switch (k) {
    case CopyKind::kHtoD: return "HtoD";
    case CopyKind::kDtoH: return "DtoH";
    case CopyKind::kDtoD: return "DtoD";
    case CopyKind::kHtoH: return "HtoH";
    case CopyKind::kPtoP: return "PtoP";
    default: return "copy";
  }
}

const char* MemoryKindName(MemoryKind k) {
  switch (k) {
    case MemoryKind::kPageable: return "pageable";
    case MemoryKind::kPinned: return "pinned";
    case MemoryKind::kDevice: return "device";
    case MemoryKind::kManaged: return "managed";
    case MemoryKind::kArray: return "array";
    default: return "unknown";
  }
}

const char* SyncKindName(SyncKind k) {
  switch (k) {
    case SyncKind::kEvent: return "event synchronize";
    case SyncKind::kStreamWaitEvent: return "stream wait event (GPU side)";
    case SyncKind::kStream: return "stream synchronize";
    case SyncKind::kContext: return "device synchronize";
    default: return "synchronize";
  }
}

// Fills a v1::StepTimeline: interns strings, numbers lanes, appends event columns.
class Builder {
 public:
  Builder(Interval window, const HostThreads& threads, v1::StepTimeline* out)
      : origin_(window.start_ns), threads_(threads), out_(out), ev_(out->mutable_events()) {
    String("");
    for (const char* k : kKindNames) out_->add_kinds(k);
  }

  int String(std::string_view s) {
    auto [it, fresh] = index_.try_emplace(std::string(s), out_->strings_size());
    if (fresh) out_->add_strings(it->first);
    return it->second;
  }

  int ThreadLane(uint32_t tid) {
    auto [it, fresh] = thread_lanes_.try_emplace(tid, 0);
    if (fresh) {
      it->second = out_->lanes_size();
      v1::TimelineLane* lane = out_->add_lanes();
      lane->set_thread_id(tid);
      auto name = threads_.names.find(tid);
      lane->set_label(ThreadDisplayName(tid, threads_.pid,
                                        name == threads_.names.end() ? "" : name->second));
    }
    return it->second;
  }

  int StreamLane(const StreamKey& s) {
    auto [it, fresh] = stream_lanes_.try_emplace(s, 0);
    if (fresh) {
      it->second = out_->lanes_size();
      v1::TimelineLane* lane = out_->add_lanes();
      lane->mutable_stream()->set_device(s.device_id);
      lane->mutable_stream()->set_stream(s.stream_id);
      lane->set_label(absl::StrCat("GPU ", s.device_id, " stream ", s.stream_id));
    }
    return it->second;
  }

  void Add(int lane, Kind kind, int64_t start_ns, int64_t end_ns, std::string_view name,
           std::string_view info, uint64_t corr, uint32_t depth) {
    ev_->add_lane(lane);
    ev_->add_kind(kind);
    ev_->add_start_ns(Rel(start_ns));
    ev_->add_end_ns(Rel(end_ns));
    ev_->add_name(String(name));
    ev_->add_info(String(info));
    ev_->add_correlation_id(corr);
    ev_->add_depth(depth);
  }

  int64_t Rel(int64_t ns) const { return ns - origin_; }

 private:
  int64_t origin_;
  const HostThreads& threads_;
  v1::StepTimeline* out_;
  v1::TimelineEvents* ev_;
  absl::flat_hash_map<std::string, int> index_;
  // Lanes are numbered in first-seen order, not by id: stable from step to step of a training
  // loop, and the launching thread comes first.
  std::map<uint32_t, int> thread_lanes_;
  std::map<StreamKey, int> stream_lanes_;
};

}  // namespace

v1::StepTimeline BuildStepTimeline(const EventColumns& ev, const StringTable& strings,
                                   Interval window, bool truncated, const HostThreads& threads) {
  v1::StepTimeline out;
  Builder b(window, threads, &out);
  // Host lanes first (the thread that launches is the one people read first), then streams.
  for (const auto& a : ev.apis) {
    std::string info = a.domain == ApiDomain::kDriver ? "driver API" : "runtime API";
    if (a.call_site != 0) absl::StrAppend(&info, " at ", Str(strings.Get(a.call_site)));
    b.Add(b.ThreadLane(a.thread_id), kApi, a.start_ns, a.end_ns, strings.Get(a.name), info,
          a.correlation_id, 0);
  }
  const std::vector<uint32_t> nvtx_rows = NvtxRows(ev.nvtx_ranges);
  for (size_t i = 0; i < ev.nvtx_ranges.size(); ++i) {
    const NvtxRangeEvent& r = ev.nvtx_ranges[i];
    b.Add(b.ThreadLane(r.thread_id), kNvtx, r.start_ns, r.end_ns, strings.Get(r.message),
          absl::StrCat("NVTX range, domain ", r.domain ? Str(strings.Get(r.domain)) : "default"), 0,
          nvtx_rows[i]);
  }
  const StringRef host_sample = strings.Find(kHostSampleDomain);
  for (const auto& m : ev.nvtx_marks) {
    // A host sample's info ends " at <site>", as a call's does: the viewer finds a finding's
    // hot line among them (timeline.js callsAt).
    b.Add(b.ThreadLane(m.thread_id), kMark, m.timestamp_ns, m.timestamp_ns, strings.Get(m.message),
          host_sample != 0 && m.domain == host_sample
              ? absl::StrCat("host sample: the Python line this thread ran while the GPU waited, at ",
                             Str(strings.Get(m.message)))
              : std::string("NVTX mark"),
          0, 0);
  }
  for (const auto& o : ev.overheads) {
    b.Add(b.ThreadLane(o.thread_id), kOverhead, o.start_ns, o.end_ns,
          absl::StrCat("CUPTI overhead: ", Str(strings.Get(o.kind))), "time the profiler itself took", 0, 0);
  }
  for (const auto& k : ev.kernels) {
    const LaunchShape& s = k.shape;
    std::string info = absl::StrCat("grid (", s.grid_x, ",", s.grid_y, ",", s.grid_z, ") block (",
                                    s.block_x, ",", s.block_y, ",", s.block_z, "), ",
                                    s.registers_per_thread, " regs, ",
                                    s.static_shared_bytes + s.dynamic_shared_bytes, " B shared");
    if (k.graph_id != 0) absl::StrAppend(&info, ", CUDA graph ", k.graph_id);
    b.Add(b.StreamLane(k.stream), kKernel, k.start_ns, k.end_ns, strings.Get(k.name), info,
          k.correlation_id, 0);
  }
  for (const auto& g : ev.graph_launches) {
    b.Add(b.StreamLane(g.stream), kGraph, g.start_ns, g.end_ns, absl::StrCat("CUDA graph ", g.graph_id),
          "whole-graph record", g.correlation_id, 0);
  }
  for (const auto& m : ev.memcpys) {
    b.Add(b.StreamLane(m.stream), kMemcpy, m.start_ns, m.end_ns,
          absl::StrCat("Memcpy ", CopyKindName(m.copy_kind)),
          absl::StrCat(FormatBytes(m.bytes), " ", MemoryKindName(m.src_kind), " -> ",
                       MemoryKindName(m.dst_kind), m.async ? ", async" : ", synchronous"),
          m.correlation_id, 0);
  }
  for (const auto& m : ev.memsets) {
    b.Add(b.StreamLane(m.stream), kMemset, m.start_ns, m.end_ns, "Memset",
          absl::StrCat(FormatBytes(m.bytes), " ", MemoryKindName(m.memory_kind), ", value ", m.value),
          m.correlation_id, 0);
  }
  for (const auto& y : ev.syncs) {
    b.Add(b.StreamLane(y.stream), kSync, y.start_ns, y.end_ns, "Synchronization",
          SyncKindName(y.sync_kind), y.correlation_id, 0);
  }

  const IdleAttribution idle = AttributeIdle(ev, strings, window);
  // The same order as kIdleCauseNames.
  const IntervalSet* causes[] = {&idle.sync_blocked, &idle.launch_bound, &idle.input,
                                 &idle.host_other, &idle.cuda_call};
  static_assert(std::size(causes) == std::size(kIdleCauseNames));
  for (int c = 0; c < static_cast<int>(std::size(causes)); ++c) {
    for (const auto& i : causes[c]->intervals()) {
      v1::TimelineIdleSpan* span = out.add_idle();
      span->set_start_ns(b.Rel(i.start_ns));
      span->set_end_ns(b.Rel(i.end_ns));
      span->set_cause(c);
    }
  }
  for (const char* name : kIdleCauseNames) out.add_idle_causes(name);
  for (const auto& c : idle.blocking_calls) {
    v1::TimelineBlockingSpan* span = out.add_blocking();
    span->set_start_ns(b.Rel(c.span.start_ns));
    span->set_end_ns(b.Rel(c.span.end_ns));
    // Without an API record (API tracing off) the blocked thread is unknown: every host lane.
    span->set_lane(c.api != nullptr ? b.ThreadLane(c.api->thread_id) : -1);
  }

  out.set_origin_ns(window.start_ns);
  out.set_wall_ns(window.length());
  out.set_truncated(truncated);
  return out;
}

}  // namespace gpuspy::analysis
