#include "inject/core/core_session.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "client/log/log_line.h"
#include "client/spill/grpc_batch_sink.h"
#include "inject/core/core_config.h"
#include "inject/core/cupti_capture.h"
#include "inject/core/event_pipeline.h"
#include "inject/core/host_sampler.h"
#include "inject/core/process_identity.h"

namespace gpuspy::inject {
namespace {

std::mutex g_session_mu;
// Never deleted: a pipeline may still run while the process exits, and a stopped one is small.
EventPipeline* g_pipeline = nullptr;
v1::ProcessIdentity g_identity;
uint32_t g_exit_timeout_ms = 2000;
uint32_t g_sessions = 0;  // how many were started: a later one is a new process to the collector
bool g_hooks_installed = false;
HostSampler* g_sampler = nullptr;  // never deleted, like the call sites it reads

void LogTotals(const char* when, const EventPipeline& pipeline) {
  const PipelineStats& s = pipeline.stats();
  Log(LogLevel::kInfo,
      "%s: %llu events, %llu batches delivered, %llu spilled, %llu spill-dropped events, "
      "%llu CUPTI-dropped records, %llu untimed GPU records, %llu unreadable buffers, "
      "%llu call sites joined (%llu expired)",
      when, static_cast<unsigned long long>(s.events.load()),
      static_cast<unsigned long long>(s.batches_delivered.load()),
      static_cast<unsigned long long>(s.batches_spilled.load()),
      static_cast<unsigned long long>(s.spill_dropped_events.load()),
      static_cast<unsigned long long>(CuptiCapture::Instance().DroppedRecords()),
      static_cast<unsigned long long>(s.untimed_records.load()),
      static_cast<unsigned long long>(s.unreadable_buffers.load()),
      static_cast<unsigned long long>(s.call_sites_joined.load()),
      static_cast<unsigned long long>(s.call_sites_expired.load()));
}

void LogCallSites() {
  CallSites* sites = CuptiCapture::Instance().call_sites();
  if (sites == nullptr) return;
  const CallSiteCounters& c = sites->counters();
  const CallSiteStats& r = sites->registry()->stats();
  Log(LogLevel::kInfo,
      "call sites: %u distinct; %llu blocking calls, %llu launches (%llu sampled, 1 in %u now, "
      "%llu after host gaps); "
      "%llu python, %llu native, %llu none, %llu busy, %llu full, %llu queue-dropped",
      sites->registry()->sites(), static_cast<unsigned long long>(c.blocking.load()),
      static_cast<unsigned long long>(c.launches.load()),
      static_cast<unsigned long long>(c.launches_sampled.load()), sites->launch_period(),
      static_cast<unsigned long long>(c.gap_enders.load()),
      static_cast<unsigned long long>(r.python.load()),
      static_cast<unsigned long long>(r.native.load()),
      static_cast<unsigned long long>(r.none.load()), static_cast<unsigned long long>(r.busy.load()),
      static_cast<unsigned long long>(r.full.load()),
      static_cast<unsigned long long>(sites->queue()->dropped()));
}

void LogHostSamples() {
  if (g_sampler == nullptr) return;
  const HostSamplerCounters& c = g_sampler->counters();
  const uint64_t samples = c.samples.load();
  Log(LogLevel::kInfo,
      "host samples: %llu taken at %u Hz in host gaps (%llu late, %llu without a Python frame, "
      "%llu refused), %llu ns each on the main thread",
      static_cast<unsigned long long>(samples), g_sampler->hz(),
      static_cast<unsigned long long>(c.late.load()),
      static_cast<unsigned long long>(c.no_frame.load()),
      static_cast<unsigned long long>(c.refused.load()),
      static_cast<unsigned long long>(samples == 0 ? 0 : c.capture_ns.load() / samples));
}

void LogCounters() {
  const CounterSampler* counters = CuptiCapture::Instance().counters();
  if (counters == nullptr) return;
  const std::string refusal = counters->last_refusal();
  Log(LogLevel::kInfo, "hardware counters: %zu devices sampled%s%s", counters->sampled_devices(),
      refusal.empty() ? "" : "; refused: ", refusal.c_str());
}

void OnExit() {
  EventPipeline* pipeline = g_pipeline;
  if (pipeline == nullptr) return;
  if (g_sampler != nullptr) g_sampler->Stop();
  CuptiCapture::Instance().StopCollection();
  pipeline->Stop(std::chrono::milliseconds(g_exit_timeout_ms));
  LogTotals("exit", *pipeline);
  LogCallSites();
  LogHostSamples();
  LogCounters();
}

// The child of a fork() inherits our memory but none of our threads, and gRPC is not fork-safe:
// the child's copy of gpuspy must do nothing at all.
void OnForkChild() {
  CuptiCapture::Instance().MarkInertAfterFork();
  if (g_pipeline != nullptr) g_pipeline->AbandonAfterFork();
  g_pipeline = nullptr;
}

}  // namespace

absl::StatusOr<v1::ProcessIdentity> StartSession(const EnvLookup& env, const std::string& cupti_path,
                                                 SessionOrigin origin) {
  std::lock_guard lock(g_session_mu);
  if (g_pipeline != nullptr) return g_identity;
  std::string warnings;
  CoreConfig config = ConfigFromLookup(env, &warnings);
  // An attached process was started without gpuspy: it is traced only inside the windows the
  // attaching CLI opens, never continuously behind its owner's back.
  if (origin == SessionOrigin::kAttach) config.mode = CaptureMode::kOnDemand;
  SetLogLevel(config.log_level);
  if (!warnings.empty()) Log(LogLevel::kWarn, "%s", warnings.c_str());
  CuptiCapture& capture = CuptiCapture::Instance();
  if (absl::Status st = capture.Start(config, cupti_path); !st.ok()) {
    capture.Stop();  // a half-made subscription must not stay behind
    return st;
  }
  g_exit_timeout_ms = config.exit_timeout_ms;
  v1::ProcessIdentity identity =
      BuildIdentity(env, origin == SessionOrigin::kAttach ? "attach" : "inject");
  if (origin == SessionOrigin::kAttach && identity.job_id().empty()) {
    // No launcher job id in its environment: name the job after the process, not the host (the
    // collector's default would put every such process of the host in one job).
    identity.set_job_id(absl::StrCat("pid-", identity.pid(), "@", identity.host()));
  }
  // A session after a detach streams with fresh string ids and sequence numbers: the collector
  // must see it as a process of its own, not as the old one's continuation.
  if (++g_sessions > 1) identity.set_process_key(absl::StrCat(identity.process_key(), ":", g_sessions));
  // CUPTI's clock may not be the wall clock: the offset lets the collector line up ranks on
  // different hosts (with the per-host skew it measures from heartbeats).
  timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  identity.set_clock_offset_ns(static_cast<int64_t>(wall.tv_sec) * 1'000'000'000 + wall.tv_nsec -
                               capture.Now());
  auto* pipeline = new EventPipeline(
      config, capture.record_parser(), identity,
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
  pipeline->EnableSpillAdoption([collector = config.collector] {
    return std::make_unique<GrpcBatchSink>(collector, v1::CAPTURE_MODE_CONTINUOUS);
  });
  if (CallSites* sites = capture.call_sites(); sites != nullptr) {
    pipeline->EnableCallSites(sites->queue(), sites->registry());
    if (config.host_sample_hz > 0) {
      if (g_sampler == nullptr) {
        g_sampler = new HostSampler(config.host_sample_hz, sites, [] { return CuptiCapture::Instance().Now(); });
      }
      // No CPython in this process (or a second session's sampler still set): nothing to sample.
      if (g_sampler->Start()) pipeline->EnableHostSamples(g_sampler);
    }
  }
  if (CounterSampler* counters = capture.counters(); counters != nullptr) {
    pipeline->EnableCounters(counters);
  }
  pipeline->Start();
  g_pipeline = pipeline;
  g_identity = identity;
  if (!g_hooks_installed) {
    g_hooks_installed = true;
    std::atexit(OnExit);
    pthread_atfork(nullptr, nullptr, OnForkChild);
  }
  Log(LogLevel::kInfo, "%s, collector %s",
      config.mode == CaptureMode::kAlways ? "capturing" : "dormant until attached",
      config.collector.c_str());
  return identity;
}

absl::StatusOr<SessionTotals> StopSession(std::chrono::milliseconds timeout) {
  std::lock_guard lock(g_session_mu);
  EventPipeline* pipeline = g_pipeline;
  if (pipeline == nullptr) return absl::NotFoundError("no gpuspy session runs in this process");
  CuptiCapture& capture = CuptiCapture::Instance();
  if (g_sampler != nullptr) g_sampler->Stop();
  capture.StopCollection();
  pipeline->Stop(timeout);  // flushes CUPTI and delivers the rest
  capture.Stop();
  g_pipeline = nullptr;
  LogTotals("detach", *pipeline);
  return SessionTotals{.events = pipeline->stats().events.load(),
                       .batches_delivered = pipeline->stats().batches_delivered.load()};
}

}  // namespace gpuspy::inject
