// The remote call against real processes (tests/unit/attach/attach_target.c): each case checks
// both that the call ran inside the target and that the target's own work came out exactly as it
// would have untouched (registers, a blocked read, a sleep, other threads).
#include "client/attach/injector.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "tests/support/subprocess.h"

extern char** environ;

namespace gpuspy::attach {
namespace {

// attach_target with a pipe on its stdin and one on its stdout.
class Target {
 public:
  explicit Target(std::vector<std::string> args) {
    args.insert(args.begin(), ATTACH_TARGET_BIN);
    int in[2], out[2];
    EXPECT_EQ(pipe2(in, O_CLOEXEC), 0);
    EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    stdin_ = in[1];
    stdout_ = out[0];
    EXPECT_EQ(ReadLine(), "ready");
  }
  ~Target() {
    if (!reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(stdin_);
    close(stdout_);
  }
  pid_t pid() const { return pid_; }
  void Write(const std::string& s) { ASSERT_EQ(write(stdin_, s.data(), s.size()), static_cast<ssize_t>(s.size())); }
  std::string ReadLine() {
    std::string line;
    char c;
    while (read(stdout_, &c, 1) == 1 && c != '\n') line.push_back(c);
    return line;
  }
  // Waits for the exit; returns the exit code (-signal when killed) and the rest of its output.
  int Wait(std::string* rest) {
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    char buf[512];
    for (ssize_t n; (n = read(stdout_, buf, sizeof(buf))) > 0;) rest->append(buf, n);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1, stdout_ = -1;
  bool reaped_ = false;
};

attach::Target Describe(pid_t pid) {
  attach::Target t;
  t.pid = pid;
  t.maps = *ReadMaps(pid);
  t.libc = *FindObject(t.maps, "libc.so.6");
  return t;
}

// Calls the probe inside `pid`; it writes the pid to a file and returns 4242.
absl::StatusOr<RemoteCallResult> Probe(pid_t pid, const std::string& file,
                                       LoadPolicy policy = LoadPolicy::kLoad) {
  return CallInProcess(Describe(pid), ATTACH_PROBE_LIB, "probe_write_pid", file, policy);
}

int PidIn(const std::string& file) {
  int pid = 0;
  (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(gpuspy::testing::ReadFile(file)), &pid);
  return pid;
}

TEST(InjectorTest, RunsAFunctionInsideASpinningProcessAndPutsItsRegistersBack) {
  gpuspy::testing::TempDir dir;
  Target target({"spin", "1500"});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  absl::StatusOr<RemoteCallResult> r = Probe(target.pid(), dir.path() + "/pid");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, 4242);
  EXPECT_EQ(PidIn(dir.path() + "/pid"), target.pid());
  EXPECT_GT(r->pause.count(), 0);
  std::string out;
  EXPECT_EQ(target.Wait(&out), 0);
  EXPECT_EQ(out, "ok spin\n");
}

// dlopen's memcpy and strlen use the vector registers: without the XSAVE state put back, a thread
// holding values there (a struct copied through xmm0) would go on with garbage.
TEST(InjectorTest, VectorRegistersComeBackExactly) {
  gpuspy::testing::TempDir dir;
  Target target({"vector", "400000000"});  // a second or more of checking
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<RemoteCallResult> r = Probe(target.pid(), dir.path() + "/pid" + std::to_string(i));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->was_in_syscall);
  }
  std::string out;
  EXPECT_EQ(target.Wait(&out), 0);
  EXPECT_EQ(out, "ok vector\n");
}

TEST(InjectorTest, AReadBlockedInTheKernelResumesAndGetsItsData) {
  gpuspy::testing::TempDir dir;
  Target target({"read"});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  absl::StatusOr<RemoteCallResult> r = Probe(target.pid(), dir.path() + "/pid");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->was_in_syscall);
  target.Write("hello\n");
  std::string out;
  EXPECT_EQ(target.Wait(&out), 0);
  EXPECT_EQ(out, "ok read hello\n");
}

TEST(InjectorTest, ASleepLastsItsFullTime) {
  gpuspy::testing::TempDir dir;
  Target target({"sleep", "1000"});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(Probe(target.pid(), dir.path() + "/pid").ok());
  std::string out;
  EXPECT_EQ(target.Wait(&out), 0);
  EXPECT_EQ(out, "ok sleep\n");
}

TEST(InjectorTest, OtherThreadsRunOnAndTheBorrowedOneIsIntact) {
  gpuspy::testing::TempDir dir;
  Target target({"threads", "16", "1500"});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(Probe(target.pid(), dir.path() + "/a").ok());
  ASSERT_TRUE(Probe(target.pid(), dir.path() + "/b").ok());  // a second call reuses the library
  EXPECT_EQ(PidIn(dir.path() + "/b"), target.pid());
  std::string out;
  EXPECT_EQ(target.Wait(&out), 0);
  EXPECT_EQ(out, "ok spin\n");
}

TEST(InjectorTest, OnlyIfLoadedSaysSoAndLoadsNothing) {
  gpuspy::testing::TempDir dir;
  Target target({"spin", "800"});
  absl::StatusOr<RemoteCallResult> r = Probe(target.pid(), dir.path() + "/pid", LoadPolicy::kOnlyIfLoaded);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("not loaded"), absl::string_view::npos) << r.status();
  const std::vector<Mapping> maps = ReadMaps(target.pid()).value_or(std::vector<Mapping>{});
  ASSERT_FALSE(maps.empty());
  for (const Mapping& m : maps) EXPECT_EQ(m.path.find("attach_probe"), std::string::npos);
  ASSERT_TRUE(Probe(target.pid(), dir.path() + "/pid").ok());
  r = Probe(target.pid(), dir.path() + "/again", LoadPolicy::kOnlyIfLoaded);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->value, 4242);
  std::string out;
  EXPECT_EQ(target.Wait(&out), 0);
  EXPECT_EQ(out, "ok spin\n");
}

TEST(InjectorTest, ALibraryThatCannotLoadIsExplainedByTheLoaderAndHarmsNothing) {
  Target target({"spin", "800"});
  absl::StatusOr<RemoteCallResult> r =
      CallInProcess(Describe(target.pid()), "/nonexistent/libnothing.so", "f", "x", LoadPolicy::kLoad);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("cannot open shared object file"), absl::string_view::npos)
      << r.status();
  std::string out;
  EXPECT_EQ(target.Wait(&out), 0);
  EXPECT_EQ(out, "ok spin\n");
}

TEST(InjectorTest, AProcessThatExitedIsAnErrorNotAHang) {
  Target target({"exit-soon", "0"});
  std::string out;
  const pid_t pid = target.pid();
  attach::Target t = Describe(pid);  // read while it still exists
  EXPECT_EQ(target.Wait(&out), 0);
  absl::StatusOr<RemoteCallResult> r = CallInProcess(t, ATTACH_PROBE_LIB, "probe_write_pid", "/dev/null", LoadPolicy::kLoad);
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace gpuspy::attach
