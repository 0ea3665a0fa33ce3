// gpuspyd's command line: the flags (CLI11) and the checks and conversions CLI11 cannot express,
// apart from main() so they are unit-tested and fuzzed (tests/fuzz/config_fuzz.cc).
#pragma once

#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collector/server/server_options.h"

namespace gpuspy::collector {

// What the flags write; the textual ones become ServerOptions fields in FinishServerFlags.
struct ServerFlags {
  ServerOptions options;
  std::string retention_age = "7d";
  std::string retention_interval = "30s";
  std::string log_level = "info";
  std::string fsync = "none";
  std::string compress = "zstd";
  bool rebuild_index = false;  // rebuild <data-dir>/index.sqlite from the segments and exit
};

// Defaults that depend on the user (unix socket, data directory: server_options.h).
ServerFlags DefaultServerFlags();

// Registers every gpuspyd flag on `app`, writing into `*flags` (which must outlive `app`). The
// defaults shown by --help are `*flags`' values at this call.
void AddServerFlags(CLI::App& app, ServerFlags* flags);

// After app.parse(): what CLI11's per-flag checks cannot say (flags that go together) and the
// conversions of the textual flags. InvalidArgument names the flag.
absl::Status FinishServerFlags(ServerFlags* flags);

// --retention-age: "7d", "12h", "30m", "45s" or any absl duration ("1h30m"); "0" = keep forever.
// Negative ages are refused (they would make every segment look expired).
absl::StatusOr<absl::Duration> ParseRetentionAge(const std::string& text);

}  // namespace gpuspy::collector
