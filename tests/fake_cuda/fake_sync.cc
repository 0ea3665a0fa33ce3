// Synchronizations: the host really waits until the simulated GPU work it waits for is done, and
// CUPTI's SYNCHRONIZATION record spans the wait.
#include <algorithm>

#include "tests/fake_cuda/fake_activity_buffers.h"
#include "tests/fake_cuda/fake_api_call.h"
#include "tests/fake_cuda/fake_cuda.h"
#include "tests/fake_cuda/fake_cupti_state.h"

using namespace fake_cupti;

namespace {

// `stream` is CUPTI_SYNCHRONIZATION_INVALID_VALUE for a device-wide synchronization.
void EmitSyncRecord(CUpti_ActivitySynchronizationType type, uint64_t start, uint64_t end,
                    uint32_t correlation_id, uint32_t stream, uint32_t event_id) {
  CUpti_ActivitySynchronization2 y{};
  y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  y.type = type;
  y.start = start;
  y.end = end;
  y.correlationId = correlation_id;
  y.contextId = kContextId;
  y.streamId = stream;
  y.cudaEventId = event_id;
  y.returnValue = 0;
  Emit(y, kContextId, stream);
}

void Synchronize(CUpti_CallbackId cbid, CUpti_ActivitySynchronizationType type, uint32_t stream) {
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  const bool device = stream == CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  SleepUntil(device ? DeviceIdleAt() : StreamIdleAt(stream));
  uint32_t event_id = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  if (type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE) {
    std::lock_guard lock(S().mu);
    event_id = S().next_event++;
  }
  const uint64_t end = call.Finish();
  EmitSyncRecord(type, call.start(), end, call.correlation_id(), stream, event_id);
}

}  // namespace

extern "C" {

void fake_cuda_stream_synchronize(uint32_t stream) {
  Synchronize(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
              CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, stream);
}

// cudaDeviceSynchronize is reported as a context synchronization, for no stream.
void fake_cuda_device_synchronize(void) {
  Synchronize(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
              CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE,
              CUPTI_SYNCHRONIZATION_INVALID_VALUE);
}

void fake_cuda_event_synchronize(uint32_t stream) {
  Synchronize(CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
              CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, stream);
}

void fake_cuda_stream_wait_stream(uint32_t waiting, uint32_t waited) {
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020);
  ExtendStreamTo(waiting, StreamIdleAt(waited));  // GPU-side: the host does not wait
  uint32_t event_id = 0;
  {
    std::lock_guard lock(S().mu);
    event_id = S().next_event++;
  }
  const uint64_t end = call.Finish();
  EmitSyncRecord(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, call.start(), end,
                 call.correlation_id(), waiting, event_id);
}

}  // extern "C"
