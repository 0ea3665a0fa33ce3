// The progress line's text, and that it is never wanted where stderr is no terminal or the answer
// is --json (viewer/cli/progress_line.h).
#include "viewer/cli/progress_line.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace gpuspy::cli {
namespace {

TEST(ProgressLine, BytesReadOfAKnownTotal) {
  EXPECT_EQ(ProgressText("importing rank0.json.gz", 42 << 20, 100 << 20, ProgressUnit::kBytes),
            "importing rank0.json.gz: 42% (42.0 MiB of 100.0 MiB)");
  EXPECT_EQ(ProgressText("reading a", 0, 10, ProgressUnit::kBytes), "reading a: 0% (0 B of 10 B)");
}

TEST(ProgressLine, EventsWithAndWithoutATotal) {
  EXPECT_EQ(ProgressText("exporting job j", 315000, 750000, ProgressUnit::kEvents),
            "exporting job j: 42% (315000 of 750000 events)");
  EXPECT_EQ(ProgressText("exporting job j", 315000, 0, ProgressUnit::kEvents),
            "exporting job j: 315000 events");
}

TEST(ProgressLine, NeverPastAHundredPercent) {
  // A step-range export reads fewer events than the job holds, a live job more than it held.
  EXPECT_EQ(ProgressText("x", 12, 10, ProgressUnit::kEvents), "x: 100% (10 of 10 events)");
}

// Runs `f` with stderr on a pipe (what `gpuspy ... 2>&1 | less` and CI logs see).
template <typename F>
auto WithStderrOnAPipe(F f) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const int saved = dup(STDERR_FILENO);
  dup2(fds[1], STDERR_FILENO);
  auto result = f();
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(fds[0]);
  close(fds[1]);
  return result;
}

TEST(ProgressLine, WantedOnATerminalForTextOnly) {
  GlobalOptions text, json;
  json.json = true;
  EXPECT_TRUE(ProgressWanted(text, /*stderr_is_terminal=*/true));
  EXPECT_FALSE(ProgressWanted(json, true));
  EXPECT_FALSE(ProgressWanted(text, false));
  // And what stderr is, is asked of stderr itself: a pipe is no terminal.
  EXPECT_FALSE(WithStderrOnAPipe([&] { return ProgressWanted(text); }));
}

// What a line wrote to stderr while `f` ran with it.
template <typename F>
std::string StderrOf(F f) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const int saved = dup(STDERR_FILENO);
  dup2(fds[1], STDERR_FILENO);
  f();
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(fds[1]);
  std::string out;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  return out;
}

TEST(ProgressLine, ShortWorkAndADisabledLineWriteNothing) {
  // Under kProgressDelay: nothing, a phase change included.
  EXPECT_EQ(StderrOf([] {
              ProgressLine line(true);
              line.Show("reading a.json: 50% (1 B of 2 B)");
              line.Show("analysing a.json", /*phase=*/true);
            }),
            "");
  EXPECT_EQ(StderrOf([] {
              ProgressLine line(false);
              line.Show("x", true);
            }),
            "");
}

}  // namespace
}  // namespace gpuspy::cli
