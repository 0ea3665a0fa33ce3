// One fake CUDA API call as CUPTI sees it, and the simulated GPU those calls enqueue work on.
#pragma once

#include <cupti.h>

#include <cstdint>

namespace fake_cupti {

// Construct at the start of the call, Finish() at its end: a correlation id, ENTER/EXIT
// callbacks (RUNTIME_API or DRIVER_API domain) and the RUNTIME/DRIVER activity record, whose
// start/end are the real times of construction and Finish(). A pending external id
// (fake_cuda_push_external_id) is attached to this call.
class ApiCall {
 public:
  ApiCall(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* symbol = nullptr);
  ApiCall(const ApiCall&) = delete;
  ApiCall& operator=(const ApiCall&) = delete;

  uint32_t correlation_id() const { return correlation_id_; }
  uint64_t start() const { return start_; }
  // Returns the end time.
  uint64_t Finish();

 private:
  void Callback(CUpti_ApiCallbackSite site);

  CUpti_CallbackDomain domain_;
  CUpti_CallbackId cbid_;
  const char* function_name_;
  const char* symbol_;
  uint32_t correlation_id_;
  uint64_t correlation_data_ = 0;  // the client's per-call slot, shared by ENTER and EXIT
  uint64_t start_;
  int return_value_ = 0;  // cudaSuccess / CUDA_SUCCESS, for functionReturnValue at EXIT
};

// Simulated GPU, per stream, in order: work enqueued at `enqueued` starts at
// max(enqueued + latency, end of the stream's previous work) and lasts `duration_ns`.
struct GpuSpan {
  uint64_t start, end;
};
GpuSpan ScheduleOnStream(uint32_t stream, uint64_t enqueued, uint64_t duration_ns);
// The stream is busy until at least `t` (a kernel whose end was decided after it started).
void ExtendStreamTo(uint32_t stream, uint64_t t);
// When the stream's / the whole device's enqueued work is done.
uint64_t StreamIdleAt(uint32_t stream);
uint64_t DeviceIdleAt();

}  // namespace fake_cupti
