#include "tests/fake_cuda/fake_api_call.h"

#include <algorithm>
#include <optional>

#include "tests/fake_cuda/fake_cuda.h"
#include "tests/fake_cuda/fake_activity_buffers.h"
#include "tests/fake_cuda/fake_callbacks.h"
#include "tests/fake_cuda/fake_cupti_state.h"

namespace fake_cupti {
namespace {

// Launch latency: a GPU cannot start work the moment the host enqueues it.
constexpr uint64_t kLaunchLatencyNs = 3000;

}  // namespace

ApiCall::ApiCall(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* symbol)
    : domain_(domain),
      cbid_(cbid),
      function_name_(FunctionName(domain, cbid)),
      symbol_(symbol != nullptr ? Intern(symbol) : nullptr) {
  fake_cuda_init();
  std::optional<uint64_t> external_id;
  {
    std::lock_guard lock(S().mu);
    correlation_id_ = S().next_correlation++;
    external_id.swap(S().pending_external_id);
  }
  if (external_id) {
    // CUPTI writes the external correlation record when the API call it applies to starts.
    CUpti_ActivityExternalCorrelation x{};
    x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    x.externalId = *external_id;
    x.correlationId = correlation_id_;
    Emit(x);
  }
  start_ = Now();
  Callback(CUPTI_API_ENTER);
}

uint64_t ApiCall::Finish() {
  Callback(CUPTI_API_EXIT);
  const uint64_t end = std::max(Now(), start_ + 1);
  const CUpti_ActivityKind kind = domain_ == CUPTI_CB_DOMAIN_DRIVER_API ? CUPTI_ACTIVITY_KIND_DRIVER
                                                                        : CUPTI_ACTIVITY_KIND_RUNTIME;
  // Like CUPTI, no record work at all (not even the thread id) for a kind nobody enabled: the
  // launch-overhead benchmark measures what tracing costs, not what the fake would waste.
  if (!KindEnabled(kind)) return end;
  CUpti_ActivityAPI a{};
  a.kind = kind;
  a.cbid = cbid_;
  a.start = start_;
  a.end = end;
  a.processId = ProcessId();
  a.threadId = ThreadId();
  a.correlationId = correlation_id_;
  a.returnValue = 0;  // cudaSuccess / CUDA_SUCCESS
  Emit(a);
  return end;
}

void ApiCall::Callback(CUpti_ApiCallbackSite site) {
  CUpti_CallbackData data{};
  data.callbackSite = site;
  data.functionName = function_name_;
  data.functionParams = nullptr;  // the fake has no real parameter structs
  data.functionReturnValue = site == CUPTI_API_EXIT ? &return_value_ : nullptr;
  data.symbolName = symbol_;
  data.context = Context();
  data.contextUid = kContextId;
  data.correlationData = &correlation_data_;
  data.correlationId = correlation_id_;
  Fire(domain_, cbid_, &data);
}

GpuSpan ScheduleOnStream(uint32_t stream, uint64_t enqueued, uint64_t duration_ns) {
  std::lock_guard lock(S().mu);
  uint64_t& free_at = S().stream_free[stream];
  GpuSpan span;
  span.start = std::max(enqueued + kLaunchLatencyNs, free_at);
  span.end = span.start + duration_ns;
  free_at = span.end;
  return span;
}

void ExtendStreamTo(uint32_t stream, uint64_t t) {
  std::lock_guard lock(S().mu);
  uint64_t& free_at = S().stream_free[stream];
  free_at = std::max(free_at, t);
}

uint64_t StreamIdleAt(uint32_t stream) {
  std::lock_guard lock(S().mu);
  auto it = S().stream_free.find(stream);
  return it != S().stream_free.end() ? it->second : 0;
}

uint64_t DeviceIdleAt() {
  std::lock_guard lock(S().mu);
  uint64_t t = 0;
  for (const auto& [stream, free_at] : S().stream_free) t = std::max(t, free_at);
  return t;
}

}  // namespace fake_cupti
