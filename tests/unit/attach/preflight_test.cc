#include "client/attach/preflight.h"

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

namespace gpuspy::attach {
namespace {

constexpr char kStatus[] =
    "Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4242\n"
    "TracerPid:\t0\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nThreads:\t17\n";

std::vector<Mapping> CudaMaps() {
  return ParseMaps(
      "7f1a20000000-7f1a20028000 r--p 00000000 08:01 777 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7f1a20028000-7f1a201bd000 r-xp 00028000 08:01 777 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7f1a30000000-7f1a30100000 r-xp 00000000 08:01 778 /usr/lib/x86_64-linux-gnu/libcuda.so.580.65\n");
}

Host Owner() { return Host{.euid = 1000, .cap_sys_ptrace = false, .ptrace_scope = 0}; }

TEST(PreflightTest, ReadsTheStatusFieldsTheChecksNeed) {
  ProcStatus s = ParseProcStatus(kStatus);
  EXPECT_EQ(s.name, "python3");
  EXPECT_EQ(s.state, 'S');
  EXPECT_EQ(s.real_uid, 1000u);
  EXPECT_EQ(s.effective_uid, 1000u);
  EXPECT_EQ(s.tracer_pid, 0);
  EXPECT_EQ(s.threads, 17);
}

TEST(PreflightTest, TheOwnerMayAttachToItsCudaProcess) {
  EXPECT_TRUE(CheckAttachable(4242, ParseProcStatus(kStatus), CudaMaps(), Owner()).ok());
  EXPECT_TRUE(CheckAttachable(4242, ParseProcStatus(kStatus), CudaMaps(), Host{.euid = 0}).ok());
}

TEST(PreflightTest, AnotherUsersProcessIsRefusedNamingItsOwner) {
  absl::Status st = CheckAttachable(4242, ParseProcStatus(kStatus), CudaMaps(), Host{.euid = 1001});
  EXPECT_EQ(st.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(st.message().find("belongs to uid 1000"), absl::string_view::npos) << st;
}

TEST(PreflightTest, ATracedProcessNamesItsTracer) {
  ProcStatus s = ParseProcStatus(kStatus);
  s.tracer_pid = 99;
  absl::Status st = CheckAttachable(4242, s, CudaMaps(), Owner());
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("already traced by pid 99"), absl::string_view::npos) << st;
}

TEST(PreflightTest, YamaScopesSayWhatToDo) {
  Host h = Owner();
  h.ptrace_scope = 1;
  absl::Status st = CheckAttachable(4242, ParseProcStatus(kStatus), CudaMaps(), h);
  EXPECT_EQ(st.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(st.message().find("CAP_SYS_PTRACE"), absl::string_view::npos) << st;
  h.cap_sys_ptrace = true;
  EXPECT_TRUE(CheckAttachable(4242, ParseProcStatus(kStatus), CudaMaps(), h).ok());
  h.ptrace_scope = 3;
  st = CheckAttachable(4242, ParseProcStatus(kStatus), CudaMaps(), h);
  EXPECT_NE(st.message().find("disabled on this host"), absl::string_view::npos) << st;
}

TEST(PreflightTest, AProcessWithoutCudaIsRefused) {
  std::vector<Mapping> maps = CudaMaps();
  maps.pop_back();
  absl::Status st = CheckAttachable(4242, ParseProcStatus(kStatus), maps, Owner());
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("has not loaded CUDA"), absl::string_view::npos) << st;
}

TEST(PreflightTest, StoppedAndExitedProcessesAreRefused) {
  ProcStatus s = ParseProcStatus(kStatus);
  s.state = 'T';
  EXPECT_NE(CheckAttachable(4242, s, CudaMaps(), Owner()).message().find("kill -CONT 4242"),
            absl::string_view::npos);
  s.state = 'Z';
  EXPECT_EQ(CheckAttachable(4242, s, CudaMaps(), Owner()).code(), absl::StatusCode::kNotFound);
}

// A real zombie (a child that exited and is not reaped yet) has no maps to read: it is called
// exited, not "not dumpable".
TEST(PreflightTest, AZombieIsSaidToHaveExited) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ProcStatus s;
  for (int i = 0; i < 500 && s.state != 'Z'; ++i) {
    std::ifstream in("/proc/" + std::to_string(child) + "/status");
    s = ParseProcStatus(std::string(std::istreambuf_iterator<char>(in), {}));
    if (s.state != 'Z') usleep(10'000);
  }
  ASSERT_EQ(s.state, 'Z');
  absl::StatusOr<Target> t = Preflight(child);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("has exited"), absl::string_view::npos) << t.status();
  waitpid(child, nullptr, 0);
}

TEST(PreflightTest, NoSuchProcessIsNotFound) {
  EXPECT_EQ(Preflight(0x7ffffff0).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Preflight(-3).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpuspy::attach
