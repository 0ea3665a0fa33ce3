#include "tests/fake_cuda/fake_callbacks.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "tests/fake_cuda/fake_cupti_state.h"

namespace fake_cupti {
namespace {

// The handle CUPTI gives the subscriber: opaque to the client; ours points at the state.
CUpti_SubscriberHandle Handle() { return reinterpret_cast<CUpti_SubscriberHandle>(&S()); }

struct CallbackId {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  const char* name;
};

// Built from the enum identifiers themselves, so a name can never disagree with its id.
#define FAKE_RUNTIME(x) {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##x, #x}
#define FAKE_DRIVER(x) {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##x, #x}
constexpr CallbackId kCallbackIds[] = {
    FAKE_RUNTIME(cudaLaunchKernel_v7000),
    FAKE_RUNTIME(__cudaLaunchKernel_v13000),
    FAKE_RUNTIME(cudaGraphLaunch_v10000),
    FAKE_RUNTIME(cudaMemcpy_v3020),
    FAKE_RUNTIME(cudaMemcpyAsync_v3020),
    FAKE_RUNTIME(cudaMemcpyPeer_v4000),
    FAKE_RUNTIME(cudaMemcpyPeerAsync_v4000),
    FAKE_RUNTIME(cudaMemset_v3020),
    FAKE_RUNTIME(cudaMemsetAsync_v3020),
    FAKE_RUNTIME(cudaMalloc_v3020),
    FAKE_RUNTIME(cudaFree_v3020),
    FAKE_RUNTIME(cudaStreamSynchronize_v3020),
    FAKE_RUNTIME(cudaDeviceSynchronize_v3020),
    FAKE_RUNTIME(cudaEventSynchronize_v3020),
    FAKE_RUNTIME(cudaStreamWaitEvent_v3020),
    FAKE_DRIVER(cuLaunchKernelEx),
};
#undef FAKE_RUNTIME
#undef FAKE_DRIVER

const CallbackId* Find(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  for (const CallbackId& c : kCallbackIds) {
    if (c.domain == domain && c.cbid == cbid) return &c;
  }
  return nullptr;
}

bool Enabled(const State& s, CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (s.disabled_cbids.contains({domain, cbid})) return false;
  return s.domains.contains(domain) || s.enabled_cbids.contains({domain, cbid});
}

}  // namespace

CUptiResult Subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                      void* userdata) {
  if (subscriber == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  State& s = S();
  std::lock_guard lock(s.mu);
  // FAKE_CUPTI_BUSY=1: another tool (torch.profiler, Nsight Systems) already holds CUPTI.
  const char* busy = std::getenv("FAKE_CUPTI_BUSY");
  if (s.subscribed || (busy != nullptr && std::strcmp(busy, "1") == 0)) {
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  // FAKE_CUPTI_OLD_DRIVER=1: the driver is older than this CUPTI's toolkit needs, which CUPTI
  // reports as NOT_INITIALIZED (CUPTI docs, "CUPTI Compatibility and Requirements").
  const char* old_driver = std::getenv("FAKE_CUPTI_OLD_DRIVER");
  if (old_driver != nullptr && std::strcmp(old_driver, "1") == 0) {
    return CUPTI_ERROR_NOT_INITIALIZED;
  }
  s.subscribed = true;
  s.callback = callback;
  s.userdata = userdata;
  *subscriber = Handle();
  return CUPTI_SUCCESS;
}

CUptiResult Unsubscribe(CUpti_SubscriberHandle subscriber) {
  {
    std::lock_guard lock(S().mu);
    if (!S().subscribed || subscriber != Handle()) return CUPTI_ERROR_INVALID_PARAMETER;
  }
  DropSubscriber();
  return CUPTI_SUCCESS;
}

void DropSubscriber() {
  State& s = S();
  std::lock_guard lock(s.mu);
  s.subscribed = false;
  s.callback = nullptr;
  s.userdata = nullptr;
  s.domains.clear();
  s.enabled_cbids.clear();
  s.disabled_cbids.clear();
}

CUptiResult EnableDomain(bool enable, CUpti_SubscriberHandle subscriber,
                         CUpti_CallbackDomain domain) {
  State& s = S();
  std::lock_guard lock(s.mu);
  if (!s.subscribed || subscriber != Handle()) return CUPTI_ERROR_INVALID_PARAMETER;
  if (domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  // The domain switch sets every callback of the domain: drop per-id settings either way.
  std::erase_if(s.enabled_cbids, [&](const auto& id) { return id.first == domain; });
  std::erase_if(s.disabled_cbids, [&](const auto& id) { return id.first == domain; });
  if (enable) s.domains.insert(domain); else s.domains.erase(domain);
  return CUPTI_SUCCESS;
}

CUptiResult EnableCallback(bool enable, CUpti_SubscriberHandle subscriber,
                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  State& s = S();
  std::lock_guard lock(s.mu);
  if (!s.subscribed || subscriber != Handle()) return CUPTI_ERROR_INVALID_PARAMETER;
  if (domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  if (enable) {
    s.enabled_cbids.insert({domain, cbid});
    s.disabled_cbids.erase({domain, cbid});
  } else {
    s.enabled_cbids.erase({domain, cbid});
    if (s.domains.contains(domain)) s.disabled_cbids.insert({domain, cbid});
  }
  return CUPTI_SUCCESS;
}

void Fire(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  {
    State& s = S();
    std::lock_guard lock(s.mu);
    if (!s.subscribed || s.callback == nullptr || !Enabled(s, domain, cbid)) return;
    callback = s.callback;
    userdata = s.userdata;
  }
  callback(userdata, domain, cbid, data);
}

void FireContextResource(CUpti_CallbackId cbid) {
  CUpti_ResourceData data{};
  data.context = Context();
  Fire(CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
}

const char* CallbackName(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const CallbackId* c = Find(domain, cbid);
  return c != nullptr ? c->name : nullptr;
}

const char* FunctionName(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const char* name = CallbackName(domain, cbid);
  if (name == nullptr) return nullptr;
  std::string base = name;
  if (const size_t v = base.rfind("_v"); v != std::string::npos && v + 2 < base.size() &&
                                         base.find_first_not_of("0123456789", v + 2) == std::string::npos) {
    base.resize(v);
  }
  return Intern(base);
}

}  // namespace fake_cupti
