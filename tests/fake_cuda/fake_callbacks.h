// The callback API: one subscriber, callbacks enabled per domain or per (domain, cbid), and the
// names CUPTI gives the runtime/driver callback ids the fake uses.
#pragma once

#include <cupti.h>

namespace fake_cupti {

CUptiResult Subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                      void* userdata);
CUptiResult Unsubscribe(CUpti_SubscriberHandle subscriber);
CUptiResult EnableDomain(bool enable, CUpti_SubscriberHandle subscriber,
                         CUpti_CallbackDomain domain);
CUptiResult EnableCallback(bool enable, CUpti_SubscriberHandle subscriber,
                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
// Drops the subscriber and everything it enabled (cuptiFinalize, reset for tests).
void DropSubscriber();

// Calls the subscriber's callback if (domain, cbid) is enabled. Never with S().mu held.
void Fire(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
// A RESOURCE-domain callback about the fake context.
void FireContextResource(CUpti_CallbackId cbid);

// cuptiGetCallbackName: the enum name after CUPTI_RUNTIME_TRACE_CBID_ / CUPTI_DRIVER_TRACE_CBID_
// ("cudaLaunchKernel_v7000"); nullptr for ids the fake does not know.
const char* CallbackName(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
// CUpti_CallbackData::functionName: the API function itself, without the version suffix
// ("cudaLaunchKernel").
const char* FunctionName(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

}  // namespace fake_cupti
