#include "client/log/log_line.h"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace gpuspy::inject {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kWarn)};

}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

LogLevel ParseLogLevel(const char* text, LogLevel fallback) {
  if (text == nullptr || *text == '\0') return fallback;
  if (std::strcmp(text, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(text, "info") == 0) return LogLevel::kInfo;
  if (std::strcmp(text, "warn") == 0) return LogLevel::kWarn;
  if (std::strcmp(text, "error") == 0) return LogLevel::kError;
  if (std::strcmp(text, "off") == 0) return LogLevel::kOff;
  return fallback;
}

void Log(LogLevel level, const char* fmt, ...) {
  if (static_cast<int>(level) < g_level.load(std::memory_order_relaxed)) return;
  char buf[1024];
  int n = std::snprintf(buf, sizeof(buf), "gpuspy[%d]: ", static_cast<int>(getpid()));
  if (n < 0) return;
  va_list args;
  va_start(args, fmt);
  const int m = std::vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, args);
  va_end(args);
  if (m < 0) return;
  size_t len = std::strlen(buf);
  buf[len++] = '\n';
  (void)!write(2, buf, len);
}

}  // namespace gpuspy::inject
