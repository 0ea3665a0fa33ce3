// Progress on a terminal for work that runs for seconds (reading a large trace, exporting a job
// of 750k events took 6.9 s without a word): one line on stderr, rewritten in place, e.g.
// "importing rank0.json.gz: 42% (123.0 MiB of 290.0 MiB)". Only when stderr is a terminal and
// the answer is not --json: a pipe or a log file never gets carriage returns, and a script gets
// exactly what it asked for. Short work shows nothing (kProgressDelay).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "viewer/cli/commands.h"

namespace gpuspy::cli {

// Work that ends sooner shows no line at all ("over ~2 s", issue 35).
inline constexpr std::chrono::milliseconds kProgressDelay{2000};
// At most this often the line is rewritten (a terminal does not need more, a slow one less).
inline constexpr std::chrono::milliseconds kProgressEvery{100};

enum class ProgressUnit { kBytes, kEvents };

// The line's text: "<what>: 42% (123.0 MiB of 290.0 MiB)", "<what>: 42% (315000 of 750000
// events)"; with `total` 0 (not known), "<what>: 315000 events" / "<what>: 123.0 MiB". `done`
// past `total` reads as 100%.
std::string ProgressText(std::string_view what, uint64_t done, uint64_t total, ProgressUnit unit);

// Whether this run shows progress: stderr is a terminal and the output is not --json.
bool ProgressWanted(const GlobalOptions& g);
// The rule itself, given what stderr is.
bool ProgressWanted(const GlobalOptions& g, bool stderr_is_terminal);

// The updating line. Thread-safe (files are read on several threads).
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  ~ProgressLine();  // clears the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // `phase`: the work moved on to another stage ("analysing ..." after "reading ... 100%"): shown
  // at once, never dropped by the rate limit.
  void Show(const std::string& text, bool phase = false);
  // Clears the line (before other output on stderr, or at the end).
  void Clear();

 private:
  const bool enabled_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point last_{};
  bool shown_ = false;
};

}  // namespace gpuspy::cli
