#include "inject/core/core_config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/ascii.h"
#include "client/spill/spill_file.h"

namespace gpuspy::inject {
namespace {

void ReadFlag(const EnvLookup& env, const char* name, bool* out, std::string* warnings) {
  const std::string v = env(name);
  if (v.empty()) return;
  if (v != "0" && v != "1") {
    absl::StrAppend(warnings, name, "='", v, "' is not 0 or 1; using ", *out ? 1 : 0, "\n");
    return;
  }
  *out = v == "1";
}

void ReadCallSites(const EnvLookup& env, CallSiteConfig* c, std::string* warnings) {
  ReadFlag(env, "GPUSPY_CALLSITES", &c->enabled, warnings);
  ReadFlag(env, "GPUSPY_CALLSITE_NATIVE", &c->frames.native, warnings);
  if (const std::string v = env("GPUSPY_CALLSITE_LAUNCHES"); !v.empty() && v != "auto") {
    uint32_t period = 0;
    if (absl::SimpleAtoi(v, &period) && period <= (1u << 24)) {
      c->launch_auto = false;
      c->launch_period = period;
    } else {
      absl::StrAppend(warnings, "GPUSPY_CALLSITE_LAUNCHES='", v,
                      "' is not 'auto' or a number in [0, 16777216]; using auto\n");
    }
  }
  if (const std::string v = env("GPUSPY_CALLSITE_GAP_US"); !v.empty()) {
    uint32_t us = 0;
    if (absl::SimpleAtoi(v, &us) && us <= 10'000'000) {
      c->gap_us = us;
    } else {
      absl::StrAppend(warnings, "GPUSPY_CALLSITE_GAP_US='", v, "' is not a number in [0, 10000000]; using ",
                      c->gap_us, "\n");
    }
  }
  // Set but empty cannot be told from unset here: "none" walks past nothing.
  if (const std::string v = env("GPUSPY_CALLSITE_SKIP"); !v.empty()) {
    c->frames.skip.clear();
    if (v != "none") {
      for (absl::string_view s : absl::StrSplit(v, ',', absl::SkipWhitespace())) {
        c->frames.skip.emplace_back(absl::StripAsciiWhitespace(s));
      }
    }
  }
}

template <typename T>
void ReadNumber(const EnvLookup& env, const char* name, T min, T max, T* out, std::string* warnings) {
  const std::string v = env(name);
  if (v.empty()) return;
  uint64_t parsed = 0;
  if (!absl::SimpleAtoi(v, &parsed) || parsed < static_cast<uint64_t>(min) ||
      parsed > static_cast<uint64_t>(max)) {
    absl::StrAppend(warnings, name, "='", v, "' is not a number in [", min, ", ", max,
                    "]; using ", *out, "\n");
    return;
  }
  *out = static_cast<T>(parsed);
}

}  // namespace

void ParseKinds(const std::string& list, CaptureKinds* kinds, std::string* warnings) {
  if (list.empty() || list == "all") {
    *kinds = CaptureKinds{};
    return;
  }
  CaptureKinds k;
  k.kernel = k.memcpy = k.memset = k.sync = k.memory = k.runtime = k.driver = k.nvtx =
      k.overhead = false;
  for (absl::string_view name : absl::StrSplit(list, ',', absl::SkipWhitespace())) {
    if (name == "kernel") k.kernel = true;
    else if (name == "memcpy") k.memcpy = true;
    else if (name == "memset") k.memset = true;
    else if (name == "sync") k.sync = true;
    else if (name == "memory") k.memory = true;
    else if (name == "runtime") k.runtime = true;
    else if (name == "driver") k.driver = true;
    else if (name == "nvtx") k.nvtx = true;
    else if (name == "overhead") k.overhead = true;
    else if (name == "graph") k.graph = true;
    else absl::StrAppend(warnings, "unknown capture kind '", name, "' ignored\n");
  }
  *kinds = k;
}

std::string DefaultCollectorAddress() {
  const std::string dir = absl::StrCat("/tmp/gpuspy-", getuid());
  const std::string socket = dir + "/gpuspyd.sock";
  struct stat st;
  // Only in a directory of our own: another user who created /tmp/gpuspy-<uid> first could be
  // listening there for our profiles (docs/security.md).
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
    return "127.0.0.1:7070";
  }
  if (stat(socket.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) return "unix:" + socket;
  return "127.0.0.1:7070";
}

CoreConfig ConfigFromLookup(const EnvLookup& env, std::string* warnings) {
  CoreConfig c;
  c.log_level = ParseLogLevel(env("GPUSPY_LOG").c_str(), LogLevel::kWarn);
  c.collector = env("GPUSPY_COLLECTOR");
  if (c.collector.empty()) c.collector = DefaultCollectorAddress();
  if (const std::string kinds = env("GPUSPY_KINDS"); !kinds.empty()) ParseKinds(kinds, &c.kinds, warnings);
  if (const std::string mode = env("GPUSPY_MODE"); !mode.empty()) {
    const std::string_view m(mode);
    if (m == "ondemand" || m == "dormant") {
      c.mode = CaptureMode::kOnDemand;
    } else if (m != "always") {
      absl::StrAppend(warnings, "GPUSPY_MODE='", mode, "' is not 'always' or 'ondemand'; using always\n");
    }
  }
  ReadNumber<int>(env, "GPUSPY_CALLSITE_CALLERS", 0, CallSiteRegistry::kMaxCallers,
                  &c.call_sites.frames.callers, warnings);
  ReadNumber<uint32_t>(env, "GPUSPY_HEARTBEAT_MS", 100, 600'000, &c.heartbeat_ms, warnings);
  ReadNumber<uint64_t>(env, "GPUSPY_BUFFER_BYTES", 64 << 10, 256ull << 20, &c.buffer_bytes, warnings);
  ReadNumber<uint32_t>(env, "GPUSPY_MAX_BUFFERS", 2, 4096, &c.max_buffers, warnings);
  ReadNumber<uint32_t>(env, "GPUSPY_FLUSH_MS", 10, 60'000, &c.flush_period_ms, warnings);
  ReadNumber<uint32_t>(env, "GPUSPY_BATCH_EVENTS", 64, 1'000'000, &c.batch_events, warnings);
  ReadNumber<uint64_t>(env, "GPUSPY_SPILL_BYTES", 0, 1ull << 40, &c.spill_max_bytes, warnings);
  ReadNumber<uint32_t>(env, "GPUSPY_EXIT_TIMEOUT_MS", 0, 600'000, &c.exit_timeout_ms, warnings);
  ReadNumber<uint32_t>(env, "GPUSPY_ACK_TIMEOUT_MS", 10, 600'000, &c.ack_timeout_ms, warnings);
  if (const std::string adopt = env("GPUSPY_ADOPT_SPILLS"); !adopt.empty()) {
    if (adopt == "0" || adopt == "1") {
      c.adopt_spills = adopt == "1";
    } else {
      absl::StrAppend(warnings, "GPUSPY_ADOPT_SPILLS='", adopt, "' is not 0 or 1; using 1\n");
    }
  }
  ReadCallSites(env, &c.call_sites, warnings);
  ReadNumber<uint32_t>(env, "GPUSPY_HOST_SAMPLE_HZ", 0, kMaxHostSampleHz, &c.host_sample_hz, warnings);
  ReadFlag(env, "GPUSPY_COUNTERS", &c.counters.enabled, warnings);
  ReadNumber<uint32_t>(env, "GPUSPY_COUNTER_INTERVAL_US", kMinCounterIntervalUs, kMaxCounterIntervalUs,
                       &c.counters.interval_us, warnings);
  if (!c.call_sites.enabled || (!c.call_sites.launch_auto && c.call_sites.launch_period == 0)) {
    c.host_sample_hz = 0;
  }
  c.spill_dir = env("GPUSPY_SPILL_DIR");
  if (c.spill_dir.empty()) c.spill_dir = DefaultSpillDir();
  return c;
}

CoreConfig ConfigFromEnvironment(std::string* warnings) {
  return ConfigFromLookup(RealEnv, warnings);
}

}  // namespace gpuspy::inject
