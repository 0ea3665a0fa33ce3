#include "tests/fake_cuda/fake_activity_buffers.h"

#include <chrono>
#include <cstring>

#include "tests/fake_cuda/fake_cupti_state.h"

namespace fake_cupti {

// The CUDA 13 layouts, as observed when this was written: a toolkit upgrade that changes one must
// be noticed here (and in gpuspy's parser), not show up as garbage in a test.
static_assert(sizeof(CUpti_ActivityKernel10) == 216);
static_assert(sizeof(CUpti_ActivityMemcpy6) == 96);
static_assert(sizeof(CUpti_ActivityMemcpyPtoP4) == 96);
static_assert(sizeof(CUpti_ActivityMemset4) == 88);
static_assert(sizeof(CUpti_ActivityAPI) == 40);
static_assert(sizeof(CUpti_ActivitySynchronization2) == 56);
static_assert(sizeof(CUpti_ActivityMemory4) == 128);
static_assert(sizeof(CUpti_ActivityMemoryPool3) == 80);
static_assert(sizeof(CUpti_ActivityMarker2) == 56);
static_assert(sizeof(CUpti_ActivityOverhead3) == 56);
static_assert(sizeof(CUpti_ActivityExternalCorrelation) == 24);
static_assert(sizeof(CUpti_ActivityGraphTrace2) == 56);
static_assert(sizeof(CUpti_ActivityDevice5) == 184);
static_assert(sizeof(CUpti_ActivityContext3) == 32);

namespace {

thread_local int my_deliveries = 0;  // completions this thread is delivering (nested flushes)

void CountDrop(State& s, uint32_t context_id, uint32_t stream_id) {
  ++s.dropped[{context_id, stream_id}];
}

// Hands the completed buffers to the client with the lock released; `lock` holds S().mu on entry
// and on return.
void Deliver(std::unique_lock<std::mutex>& lock) {
  State& s = S();
  while (!s.completed.empty()) {
    const ClientBuffer b = s.completed.front();
    s.completed.pop_front();
    const CUpti_BuffersCallbackCompleteFunc complete = s.complete;
    if (complete == nullptr) continue;  // nobody to give it to (cannot happen once registered)
    ++s.deliveries_in_flight;
    ++my_deliveries;
    lock.unlock();
    // Since CUDA 6 every buffer is global: context NULL, stream 0.
    complete(nullptr, 0, b.data, b.size, b.used);
    lock.lock();
    --my_deliveries;
    --s.deliveries_in_flight;
    s.delivered.notify_all();
  }
}

bool Usable(const ClientBuffer& b, size_t need) {
  return b.size >= need && reinterpret_cast<uintptr_t>(b.data) % 8 == 0;
}

}  // namespace

size_t RecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return sizeof(CUpti_ActivityMemoryPool3);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return sizeof(CUpti_ActivityGraphTrace2);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    default: return 0;
  }
}

bool KindEnabled(CUpti_ActivityKind kind) {
  std::lock_guard lock(S().mu);
  return S().kinds.contains(kind);
}

void EmitRecord(const void* record, size_t size, uint32_t context_id, uint32_t stream_id) {
  State& s = S();
  const CUpti_ActivityKind kind = static_cast<const CUpti_Activity*>(record)->kind;
  const size_t need = Padded(size);
  std::unique_lock lock(s.mu);
  if (!s.kinds.contains(kind)) return;
  for (;;) {
    ClientBuffer& b = s.current;
    if (b.data != nullptr &&
        (b.used + need > b.size || (b.max_records != 0 && b.records >= b.max_records))) {
      s.completed.push_back(b);
      b = {};
    }
    if (b.data == nullptr && !s.spares.empty()) {
      b = s.spares.back();
      s.spares.pop_back();
      if (!Usable(b, need)) {
        s.completed.push_back(b);  // back to the client, empty
        b = {};
      }
      continue;
    }
    if (b.data != nullptr) {
      std::memset(b.data + b.used, 0, need);
      std::memcpy(b.data + b.used, record, size);
      b.used += need;
      ++b.records;
      break;
    }
    // No buffer: ask the client, without our lock (it may call CUPTI or take its own locks).
    const CUpti_BuffersCallbackRequestFunc request = s.request;
    if (request == nullptr) {
      CountDrop(s, context_id, stream_id);
      break;
    }
    ClientBuffer fresh;
    lock.unlock();
    request(&fresh.data, &fresh.size, &fresh.max_records);
    lock.lock();
    if (fresh.data == nullptr || fresh.size == 0) {
      CountDrop(s, context_id, stream_id);  // the client declined: CUPTI drops the record
      break;
    }
    if (!Usable(fresh, need)) {
      s.completed.push_back(fresh);
      CountDrop(s, context_id, stream_id);
      break;
    }
    // Another thread may have installed a buffer meanwhile: keep ours for later.
    if (s.current.data == nullptr) s.current = fresh; else s.spares.push_back(fresh);
  }
  Deliver(lock);
}

void FlushAllBuffers() {
  State& s = S();
  std::unique_lock lock(s.mu);
  if (s.current.used > 0) {
    s.completed.push_back(s.current);
    s.current = {};
  }
  Deliver(lock);
  // Bounded: a client that flushes from inside its completion callback on two threads at once
  // would otherwise wait for itself.
  s.delivered.wait_for(lock, std::chrono::seconds(5),
                       [&] { return s.deliveries_in_flight == my_deliveries; });
}

void ReturnAllBuffers() {
  State& s = S();
  std::unique_lock lock(s.mu);
  if (s.current.data != nullptr) s.completed.push_back(s.current);
  s.current = {};
  for (const ClientBuffer& b : s.spares) s.completed.push_back(b);
  s.spares.clear();
  Deliver(lock);
}

size_t TakeDropped(CUcontext context, uint32_t stream_id) {
  State& s = S();
  std::lock_guard lock(s.mu);
  size_t n = 0;
  if (context == nullptr) {
    for (const auto& [queue, count] : s.dropped) n += count;
    s.dropped.clear();
  } else if (context == Context()) {
    auto it = s.dropped.find({kContextId, stream_id});
    if (it != s.dropped.end()) {
      n = it->second;
      s.dropped.erase(it);
    }
  }
  return n;
}

CUptiResult NextRecord(uint8_t* buffer, size_t valid_size, CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  size_t offset = 0;
  if (*record != nullptr) {
    const auto* previous = reinterpret_cast<uint8_t*>(*record);
    if (previous < buffer || previous >= buffer + valid_size) return CUPTI_ERROR_INVALID_PARAMETER;
    offset = static_cast<size_t>(previous - buffer) + Padded(RecordSize((*record)->kind));
  }
  if (offset >= valid_size) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  // The real libcupti (13.0) ends the walk with MAX_LIMIT_REACHED, not an error, when validSize
  // cuts a record short, even before its kind is read; an unknown kind is INVALID_KIND
  // (tests/unit/real_cupti_layout_test.cc holds the fake to this).
  if (offset + sizeof(CUpti_ActivityKind) > valid_size) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  const size_t size = RecordSize(next->kind);
  if (size == 0) return CUPTI_ERROR_INVALID_KIND;
  if (offset + size > valid_size) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = next;
  return CUPTI_SUCCESS;
}

}  // namespace fake_cupti
