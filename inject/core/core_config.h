// The core's configuration, from GPUSPY_* environment variables (documented in README).
#pragma once

#include <cstdint>
#include <string>

#include "client/log/log_line.h"
#include "inject/core/call_sites.h"
#include "inject/core/counter_sampler.h"
#include "inject/core/env_lookup.h"
#include "inject/core/host_sampler.h"

namespace gpuspy::inject {

// Which activity kinds to capture (GPUSPY_KINDS, comma-separated; default all).
struct CaptureKinds {
  bool kernel = true;
  bool memcpy = true;
  bool memset = true;
  bool sync = true;
  bool memory = true;
  bool runtime = true;
  bool driver = true;
  bool nvtx = true;
  bool overhead = true;
  // Whole-graph records instead of one record per graph node: off by default, since per-kernel
  // detail is what the analysis needs (GPUSPY_KINDS=...,graph turns it on).
  bool graph = false;
};

// GPUSPY_MODE: trace from start ("always", the default), or stay dormant (registered with the
// collector, CUPTI activity off) until `gpuspy attach` opens a capture window ("ondemand").
enum class CaptureMode { kAlways, kOnDemand };

struct CoreConfig {
  std::string collector;                  // GPUSPY_COLLECTOR
  CaptureMode mode = CaptureMode::kAlways;  // GPUSPY_MODE
  CaptureKinds kinds;                     // GPUSPY_KINDS
  uint64_t buffer_bytes = 4ull << 20;     // GPUSPY_BUFFER_BYTES: one CUPTI activity buffer
  uint32_t max_buffers = 32;              // GPUSPY_MAX_BUFFERS: beyond, CUPTI drops (counted)
  uint32_t flush_period_ms = 100;         // GPUSPY_FLUSH_MS: how live reports are
  uint32_t batch_events = 4096;           // GPUSPY_BATCH_EVENTS: events per wire batch
  std::string spill_dir;                  // GPUSPY_SPILL_DIR
  uint64_t spill_max_bytes = 256ull << 20;  // GPUSPY_SPILL_BYTES
  // GPUSPY_ADOPT_SPILLS: deliver spill files that ended processes of this user left behind
  // (spill_adoption.h); 0 leaves them alone.
  bool adopt_spills = true;
  uint32_t exit_timeout_ms = 2000;        // GPUSPY_EXIT_TIMEOUT_MS: bound on the final flush
  uint32_t ack_timeout_ms = 5000;         // GPUSPY_ACK_TIMEOUT_MS
  uint32_t heartbeat_ms = 1000;           // GPUSPY_HEARTBEAT_MS: liveness while not sending
  LogLevel log_level = LogLevel::kWarn;   // GPUSPY_LOG
  // GPUSPY_CALLSITES, GPUSPY_CALLSITE_LAUNCHES, GPUSPY_CALLSITE_SKIP, GPUSPY_CALLSITE_NATIVE.
  CallSiteConfig call_sites;
  // GPUSPY_HOST_SAMPLE_HZ: how often the host sampler (host_sampler.h) looks at the main thread
  // in host gaps; 0 turns it off. Off as well without call sites or with launches unwatched
  // (GPUSPY_CALLSITES=0, GPUSPY_CALLSITE_LAUNCHES=0): it needs every launch's callback to see
  // the gaps.
  uint32_t host_sample_hz = kDefaultHostSampleHz;
  // GPUSPY_COUNTERS=1: the GPU's performance counters, sampled (counter_sampler.h); off by
  // default. GPUSPY_COUNTER_INTERVAL_US: the sampling interval.
  CounterConfig counters;
};

// "kernel,memcpy,..." (or "all" / empty = everything) -> kinds; unknown names are warned about.
void ParseKinds(const std::string& list, CaptureKinds* kinds, std::string* warnings);

// Reads the configuration through `env` (unit tests and tests/fuzz/config_fuzz.cc pass their
// own); an empty value counts as unset. Malformed values keep their defaults and produce one
// warning each, collected in `warnings` (the caller logs them once logging is configured).
CoreConfig ConfigFromLookup(const EnvLookup& env, std::string* warnings);
// ConfigFromLookup(RealEnv, warnings).
CoreConfig ConfigFromEnvironment(std::string* warnings);

// "unix:/tmp/gpuspy-<uid>/gpuspyd.sock" when that socket exists, else "127.0.0.1:7070".
std::string DefaultCollectorAddress();

}  // namespace gpuspy::inject
