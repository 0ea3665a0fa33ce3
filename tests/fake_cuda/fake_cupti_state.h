// The fake CUPTI's process-wide state, shared by the CUPTI entry points and the fake CUDA calls
// (they live in one library, as CUPTI and the driver share a process).
//
// Locking rule: one mutex guards everything here, and it is NEVER held while calling into the
// client (subscriber callback, buffer callbacks, InitializeInjection). Real CUPTI calls them from
// the application's threads without a lock of ours, and a profiler is free to call back into
// CUPTI from them (flush on context teardown, read dropped counts on completion) or to wait there
// on its own threads that do.
#pragma once

#include <cupti.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

namespace fake_cupti {

inline constexpr uint32_t kContextId = 1;  // the one fake context (primary context of device 0)
inline constexpr uint32_t kDeviceId = 0;

// A buffer the client gave us (its memory, handed back through BufferCompleted).
struct ClientBuffer {
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t used = 0;
  size_t records = 0;
  size_t max_records = 0;  // 0: as many as fit
};

struct State {
  std::mutex mu;

  // Callback API: one subscriber.
  bool subscribed = false;
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  std::set<CUpti_CallbackDomain> domains;  // enabled as a whole
  std::set<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> enabled_cbids;
  std::set<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> disabled_cbids;  // within a domain

  // Activity API.
  std::set<CUpti_ActivityKind> kinds;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  // Atomic, not under `mu`: read while building records, with or without the lock held.
  std::atomic<CUpti_ActivityThreadIdType> thread_id_type{CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT};
  ClientBuffer current;                // being filled
  std::vector<ClientBuffer> spares;    // requested while another thread installed one
  std::deque<ClientBuffer> completed;  // to hand back, outside the lock
  int deliveries_in_flight = 0;        // BufferCompleted calls running right now
  std::condition_variable delivered;
  // Dropped records per queue: (context id, stream id); context id 0 is the global queue.
  std::map<std::pair<uint32_t, uint32_t>, size_t> dropped;

  // NVTX decides at its first call whether a tool receives its calls, for the process's life:
  // with an injection library then (NVTX_INJECTION64_PATH, or CUPTI already collecting
  // activity), MARKER records follow; without, every NVTX call stays a no-op, even for a
  // profiler attached later (gpuspy attach --pid). 0 = undecided, 1 = hooked, 2 = not.
  int nvtx_hooked = 0;

  // Fake CUDA.
  uint32_t next_correlation = 1;
  uint32_t next_marker = 1;
  uint32_t next_event = 1;
  uint64_t next_address = 0x7f0000000000;
  std::map<uint64_t, uint64_t> allocations;  // address -> bytes
  std::map<uint32_t, uint64_t> stream_free;  // simulated GPU: when each stream's work ends
  std::optional<uint64_t> pending_external_id;
};

State& S();

// CLOCK_REALTIME in ns: what cuptiGetTimestamp and every host-side record use.
uint64_t Now();
// Blocks the calling thread until Now() >= t (how "the host waits for the GPU" is simulated).
void SleepUntil(uint64_t t);
uint32_t ProcessId();
// The calling thread's id as CUPTI reports it for the configured CUpti_ActivityThreadIdType.
uint32_t ThreadId();
// The fake context's handle, as passed in callback data and accepted by
// cuptiActivityGetNumDroppedRecords.
CUcontext Context();
// A copy of `s` that lives as long as the process: records point at names.
const char* Intern(std::string_view s);

}  // namespace fake_cupti
