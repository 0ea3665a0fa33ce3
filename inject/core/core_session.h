// The process's one capture session: started by CUDA's injection (InitializeInjection at cuInit)
// or by `gpuspy attach --pid` in a process that is already running, and stopped by
// `gpuspy detach --pid` (or at exit). Owns the CUPTI session, the pipeline and the exit/fork hooks.
#pragma once

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "inject/core/env_lookup.h"
#include "gpuspy/v1/identity.pb.h"

namespace gpuspy::inject {

enum class SessionOrigin {
  kCudaInit,  // the configuration is the environment's (GPUSPY_MODE decides continuous/dormant)
  kAttach,    // a live process: dormant until the attaching CLI opens a capture window
};

// Starts the session, or returns the running one's identity (a second attach is a no-op).
// `env` gives the settings; `cupti_path` where libcupti is. An error leaves the process untouched
// (and says why, for the log line or the attach result).
absl::StatusOr<v1::ProcessIdentity> StartSession(const EnvLookup& env, const std::string& cupti_path,
                                                 SessionOrigin origin);

struct SessionTotals {
  uint64_t events = 0;
  uint64_t batches_delivered = 0;
};
// Stops the running session: collection off, what was captured delivered (or spilled) within
// `timeout`, CUPTI unsubscribed. The library stays loaded and a later StartSession starts anew.
// NotFound when no session runs.
absl::StatusOr<SessionTotals> StopSession(std::chrono::milliseconds timeout);

}  // namespace gpuspy::inject
