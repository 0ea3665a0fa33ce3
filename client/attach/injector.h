// Calls a function of a shared library inside another, running process: stop one of its threads
// (traced_thread.h), have it dlopen the library and dlsym the function through the process's own
// libc, call it with one string argument, and put the thread back as it was.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "client/attach/preflight.h"

namespace gpuspy::attach {

struct RemoteCallResult {
  int64_t value = 0;                 // what the function returned
  std::chrono::nanoseconds pause{};  // how long the borrowed thread was stopped
  bool was_in_syscall = false;       // where it was stopped: in a system call, or running
};

enum class LoadPolicy {
  kLoad,          // dlopen(RTLD_NOW): load the library unless it is loaded already
  kOnlyIfLoaded,  // RTLD_NOLOAD: NotFound when the process has not loaded it (detach)
};

// `library` is a path as the target sees it. `argument` is copied into the target for the call.
absl::StatusOr<RemoteCallResult> CallInProcess(const Target& target, const std::string& library,
                                               const std::string& function,
                                               const std::string& argument, LoadPolicy policy);

}  // namespace gpuspy::attach
