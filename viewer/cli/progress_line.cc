#include "viewer/cli/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "model/units.h"

namespace gpuspy::cli {
namespace {

std::string Amount(uint64_t n, ProgressUnit unit) {
  return unit == ProgressUnit::kBytes ? FormatBytes(n) : std::to_string(n);
}

}  // namespace

std::string ProgressText(std::string_view what, uint64_t done, uint64_t total, ProgressUnit unit) {
  const char* noun = unit == ProgressUnit::kEvents ? " events" : "";
  const std::string head(what);  // this absl's StrCat takes no std::string_view
  if (total == 0) return absl::StrCat(head, ": ", Amount(done, unit), noun);
  done = std::min(done, total);
  const uint64_t percent = static_cast<uint64_t>(100.0 * static_cast<double>(done) / static_cast<double>(total));
  return absl::StrCat(head, ": ", percent, "% (", Amount(done, unit), " of ", Amount(total, unit), noun, ")");
}

bool ProgressWanted(const GlobalOptions& g, bool stderr_is_terminal) { return stderr_is_terminal && !g.json; }

bool ProgressWanted(const GlobalOptions& g) { return ProgressWanted(g, isatty(STDERR_FILENO) == 1); }

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() { Clear(); }

void ProgressLine::Show(const std::string& text, bool phase) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mu_);
  if (now - start_ < kProgressDelay || (shown_ && !phase && now - last_ < kProgressEvery)) return;
  last_ = now;
  shown_ = true;
  // "\x1b[K" erases what a longer earlier line left to the right.
  std::fprintf(stderr, "\r%s\x1b[K", text.c_str());
  std::fflush(stderr);
}

void ProgressLine::Clear() {
  std::lock_guard lock(mu_);
  if (!shown_) return;
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace gpuspy::cli
