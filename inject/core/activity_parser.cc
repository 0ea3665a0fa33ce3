#include "inject/core/activity_parser.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "inject/core/activity_records.h"

namespace gpuspy::inject {
namespace {

int64_t Ns(uint64_t t) { return static_cast<int64_t>(t); }

// cuptiActivityGetNextRecord: "Records of certain kinds like CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
// may contain invalid (0) timestamps" (cupti_activity.h, CUDA 13.0).
bool Untimed(uint64_t start, uint64_t end) {
  return start == static_cast<uint64_t>(CUPTI_TIMESTAMP_UNKNOWN) ||
         end == static_cast<uint64_t>(CUPTI_TIMESTAMP_UNKNOWN);
}

CopyKind ToCopyKind(uint8_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return CopyKind::kHtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return CopyKind::kDtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return CopyKind::kDtoD;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return CopyKind::kHtoH;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return CopyKind::kPtoP;
    default:
      return CopyKind::kUnknown;
  }
}

MemoryKind ToMemoryKind(uint32_t k) {
  switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return MemoryKind::kPageable;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return MemoryKind::kPinned;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return MemoryKind::kDevice;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return MemoryKind::kManaged;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return MemoryKind::kArray;
    default: return MemoryKind::kUnknown;
  }
}

SyncKind ToSyncKind(CUpti_ActivitySynchronizationType t) {
  switch (t) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return SyncKind::kEvent;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return SyncKind::kStreamWaitEvent;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return SyncKind::kStream;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return SyncKind::kContext;
    default: return SyncKind::kUnknown;
  }
}

const char* OverheadName(CUpti_ActivityOverheadKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "driver_compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "cupti_buffer_flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "cupti_instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "cupti_resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return "module_loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "lazy_function_loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "command_buffer_full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "activity_buffer_request";
    default: return "other";
  }
}

}  // namespace

StringRef ActivityParser::ApiName(CUpti_CallbackDomain domain, uint32_t cbid) {
  const uint64_t key = static_cast<uint64_t>(domain) << 32 | cbid;
  if (auto it = api_names_.find(key); it != api_names_.end()) return it->second;
  const char* name = nullptr;
  std::string text;
  if (api_->GetCallbackName != nullptr &&
      api_->GetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name != nullptr) {
    text = name;
  } else {
    text = absl::StrCat(domain == CUPTI_CB_DOMAIN_DRIVER_API ? "cuda_driver_" : "cuda_runtime_",
                        cbid);
  }
  const StringRef ref = strings_->Intern(text);
  api_names_.emplace(key, ref);
  return ref;
}

uint32_t ActivityParser::DeviceOfContext(uint32_t context_id) const {
  auto it = context_device_.find(context_id);
  return it == context_device_.end() ? 0 : it->second;
}

void ActivityParser::OnMarker(const CUpti_ActivityMarker2& m, EventColumns* out) {
  const uint32_t tid = m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m.objectId.pt.threadId : 0;
  const StringRef domain = strings_->Intern(m.domain != nullptr ? m.domain : "");
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    out->nvtx_marks.push_back(
        {Ns(m.timestamp), domain, strings_->Intern(m.name != nullptr ? m.name : ""), tid});
    return;
  }
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    if (open_ranges_.size() >= kMaxOpenNvtxRanges) {
      auto oldest = std::min_element(open_ranges_.begin(), open_ranges_.end(),
                                     [](const auto& a, const auto& b) {
                                       return a.second.order < b.second.order;
                                     });
      --thread_depth_[oldest->second.thread_id];
      open_ranges_.erase(oldest);
    }
    uint32_t& depth = thread_depth_[tid];
    open_ranges_[m.id] = {Ns(m.timestamp), domain,
                          strings_->Intern(m.name != nullptr ? m.name : ""), tid, depth,
                          range_order_++};
    ++depth;
    return;
  }
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    auto it = open_ranges_.find(m.id);
    if (it == open_ranges_.end()) {
      ++stats_.unpaired_markers;
      return;
    }
    const OpenRange& r = it->second;
    out->nvtx_ranges.push_back({r.start_ns, Ns(m.timestamp), r.domain, r.message, r.thread_id,
                                r.depth});
    uint32_t& depth = thread_depth_[r.thread_id];
    if (depth > 0) --depth;
    open_ranges_.erase(it);
  }
}

void ActivityParser::ParseRecord(const CUpti_Activity* record, EventColumns* out) {
  ++stats_.records;
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      // KERNEL and CONCURRENT_KERNEL share one struct (activity_records.h).
      const auto& k = As<CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL>(record);
      if (Untimed(k.start, k.end)) {
        ++stats_.untimed_records;
        return;
      }
      KernelEvent e;
      e.start_ns = Ns(k.start);
      e.end_ns = Ns(k.end);
      e.correlation_id = k.correlationId;
      e.name = strings_->Intern(k.name != nullptr ? k.name : "");
      e.stream = {k.deviceId, k.contextId, k.streamId};
      e.shape = {static_cast<uint32_t>(k.gridX), static_cast<uint32_t>(k.gridY),
                 static_cast<uint32_t>(k.gridZ), static_cast<uint32_t>(k.blockX),
                 static_cast<uint32_t>(k.blockY), static_cast<uint32_t>(k.blockZ),
                 k.registersPerThread, static_cast<uint32_t>(k.staticSharedMemory),
                 static_cast<uint32_t>(k.dynamicSharedMemory)};
      e.graph_id = k.graphId;
      out->kernels.push_back(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& m = As<CUPTI_ACTIVITY_KIND_MEMCPY>(record);
      if (Untimed(m.start, m.end)) {
        ++stats_.untimed_records;
        return;
      }
      MemcpyEvent e;
      e.start_ns = Ns(m.start);
      e.end_ns = Ns(m.end);
      e.correlation_id = m.correlationId;
      e.stream = {m.deviceId, m.contextId, m.streamId};
      e.copy_kind = ToCopyKind(m.copyKind);
      e.src_kind = ToMemoryKind(m.srcKind);
      e.dst_kind = ToMemoryKind(m.dstKind);
      e.async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
      e.bytes = m.bytes;
      e.src_device_id = m.deviceId;
      e.dst_device_id = m.deviceId;
      out->memcpys.push_back(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto& m = As<CUPTI_ACTIVITY_KIND_MEMCPY2>(record);
      if (Untimed(m.start, m.end)) {
        ++stats_.untimed_records;
        return;
      }
      MemcpyEvent e;
      e.start_ns = Ns(m.start);
      e.end_ns = Ns(m.end);
      e.correlation_id = m.correlationId;
      e.stream = {m.deviceId, m.contextId, m.streamId};
      e.copy_kind = CopyKind::kPtoP;
      e.src_kind = ToMemoryKind(m.srcKind);
      e.dst_kind = ToMemoryKind(m.dstKind);
      e.async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
      e.bytes = m.bytes;
      e.src_device_id = m.srcDeviceId;
      e.dst_device_id = m.dstDeviceId;
      out->memcpys.push_back(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& m = As<CUPTI_ACTIVITY_KIND_MEMSET>(record);
      if (Untimed(m.start, m.end)) {
        ++stats_.untimed_records;
        return;
      }
      MemsetEvent e;
      e.start_ns = Ns(m.start);
      e.end_ns = Ns(m.end);
      e.correlation_id = m.correlationId;
      e.stream = {m.deviceId, m.contextId, m.streamId};
      e.memory_kind = ToMemoryKind(m.memoryKind);
      e.async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) != 0;
      e.bytes = m.bytes;
      e.value = m.value;
      out->memsets.push_back(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& a = As<CUPTI_ACTIVITY_KIND_RUNTIME>(record);
      const bool driver = record->kind == CUPTI_ACTIVITY_KIND_DRIVER;
      ApiEvent e;
      e.start_ns = Ns(a.start);
      e.end_ns = Ns(a.end);
      e.correlation_id = a.correlationId;
      e.domain = driver ? ApiDomain::kDriver : ApiDomain::kRuntime;
      e.cbid = a.cbid;
      e.name = ApiName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, a.cbid);
      e.thread_id = a.threadId;
      out->apis.push_back(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& s = As<CUPTI_ACTIVITY_KIND_SYNCHRONIZATION>(record);
      SyncEvent e;
      e.start_ns = Ns(s.start);
      e.end_ns = Ns(s.end);
      e.correlation_id = s.correlationId;
      // Context-wide syncs carry no stream (CUPTI reports CUPTI_SYNCHRONIZATION_INVALID_VALUE).
      const uint32_t stream = s.streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? 0 : s.streamId;
      e.stream = {DeviceOfContext(s.contextId), s.contextId, stream};
      e.sync_kind = ToSyncKind(s.type);
      out->syncs.push_back(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const auto& m = As<CUPTI_ACTIVITY_KIND_MEMORY2>(record);
      MemoryEvent e;
      e.timestamp_ns = Ns(m.timestamp);
      e.correlation_id = m.correlationId;
      e.stream = {m.deviceId, m.contextId, m.streamId};
      e.op = m.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                 ? MemoryOpKind::kAlloc
             : m.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
                 ? MemoryOpKind::kFree
                 : MemoryOpKind::kUnknown;
      e.memory_kind = ToMemoryKind(m.memoryKind);
      e.from_pool = m.memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
      e.address = m.address;
      e.bytes = m.bytes;
      out->memory.push_back(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MARKER:
      OnMarker(As<CUPTI_ACTIVITY_KIND_MARKER>(record), out);
      return;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto& o = As<CUPTI_ACTIVITY_KIND_OVERHEAD>(record);
      const uint32_t tid =
          o.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? o.objectId.pt.threadId : 0;
      out->overheads.push_back(
          {Ns(o.start), Ns(o.end), strings_->Intern(OverheadName(o.overheadKind)), tid});
      return;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
      const auto& g = As<CUPTI_ACTIVITY_KIND_GRAPH_TRACE>(record);
      if (Untimed(g.start, g.end)) {
        ++stats_.untimed_records;
        return;
      }
      out->graph_launches.push_back(
          {Ns(g.start), Ns(g.end), g.correlationId, {g.deviceId, g.contextId, g.streamId}, g.graphId});
      return;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto& x = As<CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION>(record);
      out->external_correlations.push_back(
          {x.correlationId, static_cast<uint32_t>(x.externalKind), x.externalId});
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: {
      const auto& m = As<CUPTI_ACTIVITY_KIND_MEMORY_POOL>(record);
      MemoryPoolEvent e;
      e.timestamp_ns = Ns(m.timestamp);
      e.correlation_id = m.correlationId;
      e.device_id = m.deviceId;
      e.op = m.memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED
                 ? PoolOpKind::kCreated
             : m.memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED
                 ? PoolOpKind::kDestroyed
             : m.memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED
                 ? PoolOpKind::kTrimmed
                 : PoolOpKind::kUnknown;
      e.managed = m.isManagedPool != 0;
      e.address = m.address;
      e.size = m.size;
      e.release_threshold = m.releaseThreshold;
      e.utilized_bytes = m.utilizedSize;
      out->memory_pools.push_back(e);
      return;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto& d = As<CUPTI_ACTIVITY_KIND_DEVICE>(record);
      devices_.push_back({d.id, d.name != nullptr ? d.name : "", d.numMultiprocessors,
                          d.globalMemorySize, d.computeCapabilityMajor,
                          d.computeCapabilityMinor});
      return;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      const auto& c = As<CUPTI_ACTIVITY_KIND_CONTEXT>(record);
      context_device_[c.contextId] = c.deviceId;
      return;
    }
    default:
      ++stats_.skipped_kinds;
      return;
  }
}

void ActivityParser::ParseBuffer(uint8_t* buffer, size_t valid_bytes, EventColumns* out) {
  if (buffer == nullptr || valid_bytes == 0) return;
  CUpti_Activity* record = nullptr;
  CUptiResult status = CUPTI_SUCCESS;
  while ((status = api_->ActivityGetNextRecord(buffer, valid_bytes, &record)) == CUPTI_SUCCESS) {
    ParseRecord(record, out);
  }
  if (status != CUPTI_ERROR_MAX_LIMIT_REACHED) ++stats_.unreadable_buffers;
}

}  // namespace gpuspy::inject
