// libgpuspy_core.so's exported entry points. Everything else in the core is hidden.
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "client/log/log_line.h"
#include "client/spill/grpc_batch_sink.h"
#include "inject/core/core_config.h"
#include "inject/core/cupti_capture.h"
#include "inject/core/event_pipeline.h"
#include "inject/core/process_identity.h"
#include "inject/stub/core_entry.h"

namespace gpuspy::inject {
namespace {

std::mutex g_start_mu;
bool g_started = false;
EventPipeline* g_pipeline = nullptr;  // never deleted: it may still run while the process exits
uint32_t g_exit_timeout_ms = 2000;

void OnExit() {
  if (g_pipeline == nullptr) return;
  CuptiCapture::Instance().StopCollection();
  g_pipeline->Stop(std::chrono::milliseconds(g_exit_timeout_ms));
  const PipelineStats& s = g_pipeline->stats();
  Log(LogLevel::kInfo,
      "exit: %llu events, %llu batches delivered, %llu spilled, %llu spill-dropped events, "
      "%llu CUPTI-dropped records, %llu untimed GPU records, %llu unreadable buffers, "
      "%llu call sites joined (%llu expired)",
      static_cast<unsigned long long>(s.events.load()),
      static_cast<unsigned long long>(s.batches_delivered.load()),
      static_cast<unsigned long long>(s.batches_spilled.load()),
      static_cast<unsigned long long>(s.spill_dropped_events.load()),
      static_cast<unsigned long long>(CuptiCapture::Instance().DroppedRecords()),
      static_cast<unsigned long long>(s.untimed_records.load()),
      static_cast<unsigned long long>(s.unreadable_buffers.load()),
      static_cast<unsigned long long>(s.call_sites_joined.load()),
      static_cast<unsigned long long>(s.call_sites_expired.load()));
  if (CallSites* sites = CuptiCapture::Instance().call_sites(); sites != nullptr) {
    const CallSiteCounters& c = sites->counters();
    const CallSiteStats& r = sites->registry()->stats();
    Log(LogLevel::kInfo,
        "call sites: %u distinct; %llu blocking calls, %llu launches (%llu sampled, 1 in %u now); "
        "%llu python, %llu native, %llu none, %llu busy, %llu full, %llu queue-dropped",
        sites->registry()->sites(), static_cast<unsigned long long>(c.blocking.load()),
        static_cast<unsigned long long>(c.launches.load()),
        static_cast<unsigned long long>(c.launches_sampled.load()), sites->launch_period(),
        static_cast<unsigned long long>(r.python.load()),
        static_cast<unsigned long long>(r.native.load()),
        static_cast<unsigned long long>(r.none.load()),
        static_cast<unsigned long long>(r.busy.load()),
        static_cast<unsigned long long>(r.full.load()),
        static_cast<unsigned long long>(sites->queue()->dropped()));
  }
}

// The child of a fork() inherits our memory but none of our threads, and gRPC is not fork-safe:
// the child's copy of gpuspy must do nothing at all.
void OnForkChild() {
  CuptiCapture::Instance().MarkInertAfterFork();
  if (g_pipeline != nullptr) g_pipeline->AbandonAfterFork();
  g_pipeline = nullptr;
}

int Start(const char* cupti_path) {
  std::lock_guard lock(g_start_mu);
  if (g_started) return 0;
  g_started = true;
  std::string warnings;
  const CoreConfig config = ConfigFromEnvironment(&warnings);
  SetLogLevel(config.log_level);
  if (!warnings.empty()) Log(LogLevel::kWarn, "%s", warnings.c_str());
  CuptiCapture& capture = CuptiCapture::Instance();
  if (absl::Status st = capture.Start(config, cupti_path != nullptr ? cupti_path : "libcupti.so.13");
      !st.ok()) {
    Log(LogLevel::kWarn, "degraded: %s; the application runs without profiling",
        std::string(st.message()).c_str());
    return 1;
  }
  g_exit_timeout_ms = config.exit_timeout_ms;
  v1::ProcessIdentity identity = BuildIdentity(RealEnv, "inject");
  // CUPTI's clock may not be the wall clock: the offset lets the collector line up ranks on
  // different hosts (with the per-host skew it measures from heartbeats).
  timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  identity.set_clock_offset_ns(static_cast<int64_t>(wall.tv_sec) * 1'000'000'000 + wall.tv_nsec -
                               capture.Now());
  g_pipeline = new EventPipeline(
      config, capture.api(), std::move(identity),
      std::make_unique<GrpcBatchSink>(config.collector, config.mode == CaptureMode::kAlways
                                                            ? v1::CAPTURE_MODE_CONTINUOUS
                                                            : v1::CAPTURE_MODE_DORMANT),
      capture.pool(), capture.completed(),
      [](bool forced) { CuptiCapture::Instance().Flush(forced); },
      [] { return CuptiCapture::Instance().DroppedRecords(); },
      TracingControl{
          .enable = [](const CaptureKinds& k) { CuptiCapture::Instance().EnableKinds(k); },
          .disable = [] { CuptiCapture::Instance().StopCollection(); },
          .now_ns = [] { return CuptiCapture::Instance().Now(); },
      });
  g_pipeline->EnableSpillAdoption([collector = config.collector] {
    return std::make_unique<GrpcBatchSink>(collector, v1::CAPTURE_MODE_CONTINUOUS);
  });
  if (CallSites* sites = capture.call_sites(); sites != nullptr) {
    g_pipeline->EnableCallSites(sites->queue(), sites->registry());
  }
  g_pipeline->Start();
  std::atexit(OnExit);
  pthread_atfork(nullptr, nullptr, OnForkChild);
  Log(LogLevel::kInfo, "%s, collector %s",
      config.mode == CaptureMode::kAlways ? "capturing" : "dormant until attached",
      config.collector.c_str());
  return 0;
}

}  // namespace
}  // namespace gpuspy::inject

extern "C" {

// Called by the injection stub (libgpuspy_inject.so).
__attribute__((visibility("default"))) int gpuspy_core_start(const gpuspy_core_args* args) {
  const char* cupti = args != nullptr && args->struct_size >= sizeof(gpuspy_core_args)
                          ? args->cupti_path
                          : nullptr;
  return gpuspy::inject::Start(cupti);
}

// Lets the core be named directly: CUDA_INJECTION64_PATH=libgpuspy_core.so (no shim, no stub).
__attribute__((visibility("default"))) int InitializeInjection(void) {
  const char* env = std::getenv("GPUSPY_CUPTI_PATH");
  gpuspy::inject::Start(env != nullptr && *env != '\0' ? env : "libcupti.so.13");
  return 1;
}

}  // extern "C"
