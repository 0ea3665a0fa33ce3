// libFuzzer target: configuration parsing on both sides.
//   - the injected core's GPUSPY_* environment (inject/core/core_config.h, through
//     ConfigFromLookup: no real environment is touched);
//   - gpuspyd's command line: CLI11 with gpuspyd's flags, then FinishServerFlags
//     (collector/server/server_flags.h), the step pattern and the loopback test of the listeners.
// Input: lines. Up to a line "--": NAME=value environment entries; after it: one gpuspyd
// argument per line ("--retention-age\n12h"). Whatever is accepted must be in range.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_split.h"
#include "analysis/step_segmenter.h"
#include "collector/auth/collector_security.h"
#include "collector/server/server_flags.h"
#include "inject/core/core_config.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    __builtin_trap();
  }
}

void FuzzCoreConfig(const std::map<std::string, std::string>& env) {
  std::string warnings;
  const gpuspy::inject::CoreConfig c = gpuspy::inject::ConfigFromLookup(
      [&env](const char* name) -> std::string {
        auto it = env.find(name);
        return it == env.end() ? std::string() : it->second;
      },
      &warnings);
  // The bounds core_config.cc promises (a value outside them keeps its default).
  Check(c.buffer_bytes >= (64u << 10) && c.buffer_bytes <= (256ull << 20), "GPUSPY_BUFFER_BYTES");
  Check(c.max_buffers >= 2 && c.max_buffers <= 4096, "GPUSPY_MAX_BUFFERS");
  Check(c.flush_period_ms >= 10 && c.flush_period_ms <= 60'000, "GPUSPY_FLUSH_MS");
  Check(c.batch_events >= 64 && c.batch_events <= 1'000'000, "GPUSPY_BATCH_EVENTS");
  Check(c.spill_max_bytes <= (1ull << 40), "GPUSPY_SPILL_BYTES");
  Check(c.exit_timeout_ms <= 600'000, "GPUSPY_EXIT_TIMEOUT_MS");
  Check(c.ack_timeout_ms >= 10 && c.ack_timeout_ms <= 600'000, "GPUSPY_ACK_TIMEOUT_MS");
  Check(c.heartbeat_ms >= 100 && c.heartbeat_ms <= 600'000, "GPUSPY_HEARTBEAT_MS");
  Check(!c.collector.empty() && !c.spill_dir.empty(), "collector / spill dir empty");
}

void FuzzServerFlags(const std::vector<std::string>& args) {
  gpuspy::collector::ServerFlags flags = gpuspy::collector::DefaultServerFlags();
  CLI::App app{"gpuspyd"};
  gpuspy::collector::AddServerFlags(app, &flags);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 wants them reversed
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError&) {
    return;  // main() prints it and exits (CLI11_PARSE)
  }
  if (!gpuspy::collector::FinishServerFlags(&flags).ok()) return;
  const gpuspy::collector::ServerOptions& o = flags.options;
  Check(o.role == "standalone" || o.role == "node" || o.role == "hub", "--role");
  Check((o.role == "node") == !o.forward_to.empty(), "--role node / --forward-to");
  Check(o.retention_age >= absl::ZeroDuration(), "--retention-age negative");
  Check(o.segment_bytes >= 4096 && o.segment_bytes <= (1ull << 40), "--segment-bytes");
  Check(o.max_message_bytes >= (1 << 16) && o.max_message_bytes <= (1 << 30), "--max-message-bytes");
  (void)gpuspy::analysis::StepSegmenter(o.step_pattern).valid();
  (void)gpuspy::collector::IsLoopbackListenAddress(o.listen);
  (void)gpuspy::collector::IsLoopbackListenAddress(o.http);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::map<std::string, std::string> env;
  std::vector<std::string> args;
  bool in_args = false;
  for (absl::string_view line : absl::StrSplit(input, '\n')) {
    if (!in_args && line == "--") {
      in_args = true;
    } else if (in_args) {
      args.emplace_back(line);
    } else {
      std::pair<std::string, std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
      env.insert(std::move(kv));  // the first of repeated names, as getenv finds it
    }
  }
  FuzzCoreConfig(env);
  if (args.size() <= 64) FuzzServerFlags(args);
  return 0;
}
