// What `gpuspy attach --pid` hands a process that is already running: a file of GPUSPY_* settings
// (the process's environment has none of them) and, beside it, the file where the process says
// how the attach went, which the attaching CLI waits for.
//
// The settings file: one KEY=VALUE per line, written 0600 by the CLI (viewer/cli/attach_pid_*).
// The result file, `<settings>.result`, one line, tab-separated:
//   ok <TAB> job id <TAB> process key        capture session started (or already running)
//   detached <TAB> events sent               the session stopped, the library stays loaded
//   error <TAB> message                      why not; the application runs on untouched
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "inject/core/env_lookup.h"

namespace gpuspy::inject {

class AttachSettings {
 public:
  static absl::StatusOr<AttachSettings> Read(const std::string& path);
  // The settings first, then the process's own environment (its job ids, RANK, ...).
  EnvLookup Overlay() const;
  const std::string& result_path() const { return result_path_; }

 private:
  std::map<std::string, std::string> values_;
  std::string result_path_;
};

// The result file of the settings file at `settings_path`.
std::string AttachResultPath(const std::string& settings_path);
// Replaces the result file with `fields` joined by tabs, atomically (the CLI polls for it).
void WriteAttachResult(const std::string& result_path, std::initializer_list<std::string> fields);

}  // namespace gpuspy::inject
