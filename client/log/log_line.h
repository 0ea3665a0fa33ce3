// One-line diagnostics from inside someone else's process. Deliberately not spdlog: the core is
// loaded into arbitrary applications (which may carry their own spdlog/fmt), and a log line here
// must never allocate much, throw, or interleave with the app's output mid-line.
#pragma once

namespace gpuspy::inject {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

void SetLogLevel(LogLevel level);
LogLevel ParseLogLevel(const char* text, LogLevel fallback);
// printf-style; writes "gpuspy[pid]: <message>\n" to stderr with one write(2).
void Log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace gpuspy::inject
