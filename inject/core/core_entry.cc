// libgpuspy_core.so's exported entry points. Everything else in the core is hidden.
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <string>

#include "client/log/log_line.h"
#include "inject/core/attach_config.h"
#include "inject/core/core_session.h"
#include "inject/stub/core_entry.h"

namespace gpuspy::inject {
namespace {

// Bounds the detach's final delivery: the attaching CLI waits for the result meanwhile.
constexpr std::chrono::milliseconds kDetachDeliveryTimeout{5000};

int StartFromCudaInit(const char* cupti_path) {
  absl::StatusOr<v1::ProcessIdentity> started =
      StartSession(RealEnv, cupti_path != nullptr ? cupti_path : "libcupti.so.13",
                   SessionOrigin::kCudaInit);
  if (!started.ok()) {
    Log(LogLevel::kWarn, "degraded: %s; the application runs without profiling",
        std::string(started.status().message()).c_str());
    return 1;
  }
  return 0;
}

// `gpuspy attach --pid`: the stub calls this on a thread of its own inside the running process.
int StartFromAttach(const gpuspy_core_args& args) {
  const std::string settings_path = args.config_path != nullptr ? args.config_path : "";
  absl::StatusOr<AttachSettings> settings = AttachSettings::Read(settings_path);
  if (!settings.ok()) {
    WriteAttachResult(AttachResultPath(settings_path), {"error", std::string(settings.status().message())});
    return 1;
  }
  absl::StatusOr<v1::ProcessIdentity> started =
      StartSession(settings->Overlay(), args.cupti_path != nullptr ? args.cupti_path : "libcupti.so.13",
                   SessionOrigin::kAttach);
  if (!started.ok()) {
    Log(LogLevel::kWarn, "attach: %s; the application runs on untouched",
        std::string(started.status().message()).c_str());
    WriteAttachResult(settings->result_path(), {"error", std::string(started.status().message())});
    return 1;
  }
  WriteAttachResult(settings->result_path(), {"ok", started->job_id(), started->process_key()});
  return 0;
}

int StopFromDetach(const gpuspy_core_args& args) {
  const std::string result = AttachResultPath(args.config_path != nullptr ? args.config_path : "");
  absl::StatusOr<SessionTotals> stopped = StopSession(kDetachDeliveryTimeout);
  if (!stopped.ok()) {
    WriteAttachResult(result, {"error", std::string(stopped.status().message())});
    return 1;
  }
  WriteAttachResult(result, {"detached", std::to_string(stopped->events)});
  return 0;
}

}  // namespace
}  // namespace gpuspy::inject

extern "C" {

// Called by the injection stub (libgpuspy_inject.so).
__attribute__((visibility("default"))) int gpuspy_core_start(const gpuspy_core_args* args) {
  if (args == nullptr || args->struct_size < offsetof(gpuspy_core_args, reason) + sizeof(int)) {
    return gpuspy::inject::StartFromCudaInit(nullptr);
  }
  // Older stubs pass a shorter struct: fields past their size are not there.
  const bool has_config = args->struct_size >= sizeof(gpuspy_core_args);
  switch (args->reason) {
    case GPUSPY_START_ATTACH:
      return has_config ? gpuspy::inject::StartFromAttach(*args) : 1;
    case GPUSPY_STOP_DETACH:
      return has_config ? gpuspy::inject::StopFromDetach(*args) : 1;
    default:
      return gpuspy::inject::StartFromCudaInit(args->cupti_path);
  }
}

// Lets the core be named directly: CUDA_INJECTION64_PATH=libgpuspy_core.so (no shim, no stub).
__attribute__((visibility("default"))) int InitializeInjection(void) {
  const char* env = std::getenv("GPUSPY_CUPTI_PATH");
  gpuspy::inject::StartFromCudaInit(env != nullptr && *env != '\0' ? env : "libcupti.so.13");
  return 1;
}

}  // extern "C"
