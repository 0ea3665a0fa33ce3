// `gpuspy attach --pid` end to end: processes started WITHOUT any gpuspy environment (no
// LD_PRELOAD, no GPUSPY_*, no CUDA_INJECTION64_PATH) run the fake CUDA training loop, the real
// CLI loads gpuspy into them through ptrace, and a real gpuspyd gets their steps. The targets must
// finish exactly as they would have: exit code, output, and nothing of gpuspy on their stderr.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using testing::Process;
using testing::RunResult;

constexpr char kNobody[] = "65534";

class AttachPidE2E : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(daemon_.Start()) << daemon_.log(); }

  // A training process that knows nothing of gpuspy; its stdout and stderr go to `name`.log.
  std::unique_ptr<Process> StartTarget(const std::string& name, std::vector<std::string> argv,
                                       std::vector<std::string> env = {}) {
    env.push_back("LD_LIBRARY_PATH=" + std::string(FAKE_CUDA_LIB_DIR));
    auto p = std::make_unique<Process>(argv, dir_.path() + "/" + name + ".log", env);
    // Until the process has run its first CUDA call, there is nothing to attach to.
    for (int i = 0; i < 200 && !HasCuda(p->pid()); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return p;
  }
  static bool HasCuda(pid_t pid) {
    return testing::ReadFile("/proc/" + std::to_string(pid) + "/maps").find("libcupti") != std::string::npos;
  }
  std::unique_ptr<Process> StartTrainer(const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {FAKE_TRAIN_BIN, "--until-signal", "--handle-signals",
                                     "--kernels", "8", "--sleep-us", "20000"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return StartTarget(name, argv);
  }
  std::string TargetLog(const std::string& name) { return testing::ReadFile(dir_.path() + "/" + name + ".log"); }

  RunResult Cli(std::vector<std::string> args, std::vector<std::string> prefix = {}) {
    std::vector<std::string> argv = prefix;
    argv.insert(argv.end(), {GPUSPY_BIN, "--collector", daemon_.address()});
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::Run(argv, {"GPUSPY_INJECT_LIB=" + std::string(STUB_LIB)}, std::chrono::seconds(90));
  }
  static std::vector<std::string> As(const char* uid) {
    return {"setpriv", std::string("--reuid=") + uid, std::string("--regid=") + uid, "--clear-groups", "--"};
  }
  // Rows of the step table the attach printed (lines starting with the process's rank column).
  static int ReportRows(const std::string& out) {
    int rows = 0;
    bool in_table = false;
    for (size_t at = 0; at < out.size();) {
      size_t end = out.find('\n', at);
      if (end == std::string::npos) end = out.size();
      const std::string line = out.substr(at, end - at);
      if (line.find("PRIMARY BOTTLENECK") != std::string::npos) {
        in_table = true;
      } else if (in_table) {
        if (line.empty()) break;
        ++rows;
      }
      at = end + 1;
    }
    return rows;
  }
  static void RequireRoot() {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to run processes as another user";
  }

  testing::TempDir dir_;
  testing::Gpuspyd daemon_{{.binary = GPUSPYD_BIN, .dir = dir_.path(), .log_level = "info"}};
};

TEST_F(AttachPidE2E, ReportsStepsOfAProcessStartedWithoutGpuspyThenDetachesAndAttachesAgain) {
  auto target = StartTrainer("train");
  const std::string pid = std::to_string(target->pid());
  RunResult first = Cli({"attach", "--pid", pid, "--steps", "3", "--job", "live-train"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err << daemon_.log();
  EXPECT_NE(first.out.find("gpuspy loaded; its thread was stopped for"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("registered with gpuspyd as job live-train"), std::string::npos) << first.out;
  // Attached after its first NVTX call, the program's NVTX is not hooked (the fake does as NVTX
  // does): the steps are found by their repetition, and the window closed after 3 of them.
  EXPECT_NE(first.out.find("3 steps found by their repetition; closing the window"), std::string::npos)
      << first.out;
  EXPECT_NE(first.out.find("done, 3 steps"), std::string::npos) << first.out;
  EXPECT_EQ(ReportRows(first.out), 3) << first.out;

  RunResult detach = Cli({"detach", "--pid", pid});
  ASSERT_EQ(detach.exit_code, 0) << detach.out << detach.err;
  EXPECT_NE(detach.out.find("detached ("), std::string::npos) << detach.out;
  RunResult again = Cli({"detach", "--pid", pid});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("no gpuspy session runs"), std::string::npos) << again.err;

  // The library stays loaded; a second attach starts a new session in it.
  RunResult second = Cli({"attach", "--pid", pid, "--steps", "2", "--job", "live-train"});
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_EQ(ReportRows(second.out), 2) << second.out;
  const std::string maps = testing::ReadFile("/proc/" + pid + "/maps");
  EXPECT_NE(maps.find("libgpuspy_inject.so"), std::string::npos);

  EXPECT_EQ(target->Stop(SIGTERM), 0);
  EXPECT_EQ(TargetLog("train"), "") << "the target's own output must be untouched";
}

TEST_F(AttachPidE2E, MatchAndCgroupSelectOnlyTheCudaProcessesTheyName) {
  // Two trainers of one job (their environment names it, as a launcher's would) and a process
  // whose command line matches too but never loaded CUDA.
  auto a = StartTarget("a", {FAKE_TRAIN_BIN, "--until-signal", "--handle-signals", "--sleep-us", "20000",
                             "--kernels", "7"}, {"SLURM_JOB_ID=77001"});
  auto b = StartTarget("b", {FAKE_TRAIN_BIN, "--until-signal", "--handle-signals", "--sleep-us", "20000",
                             "--kernels", "7"}, {"SLURM_JOB_ID=77001"});
  Process bystander({"sh", "-c", "sleep 30 # fake_train --kernels 7"});
  RunResult r = Cli({"attach", "--match", "fake_train.*--kernels 7", "--duration", "1s"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("pid " + std::to_string(a->pid()) + ": registered with gpuspyd as job 77001"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pid " + std::to_string(b->pid()) + ": registered"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("pid " + std::to_string(bystander.pid())), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 processes of job 77001 armed"), std::string::npos) << r.out;
  // A cgroup is read from its cgroup.procs: here a directory that lists one trainer and the
  // bystander, so only the trainer is attached, and only it is captured though its job has two
  // dormant processes now.
  const std::string cgroup = dir_.path() + "/cgroup";
  ASSERT_EQ(system(("mkdir -p " + cgroup + " && printf '%d\n%d\n' " + std::to_string(bystander.pid()) +
                    " " + std::to_string(b->pid()) + " > " + cgroup + "/cgroup.procs").c_str()), 0);
  RunResult c = Cli({"attach", "--cgroup", cgroup, "--duration", "1s"});
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_NE(c.out.find("1 process of job 77001 armed"), std::string::npos) << c.out;
  RunResult none = Cli({"attach", "--match", "no-such-program-xyz", "--steps", "1"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no running CUDA process matches"), std::string::npos) << none.err;
  EXPECT_EQ(a->Stop(SIGTERM), 0);
  EXPECT_EQ(b->Stop(SIGTERM), 0);
}

TEST_F(AttachPidE2E, APythonProcessGetsItsCallSitesNamed) {
  auto target = StartTarget("py", {PYTHON3, std::string(SOURCE_DIR) + "/tests/e2e/callsite_train.py",
                                   FAKE_CUPTI_LIB, "100000"});
  RunResult r = Cli({"attach", "--pid", std::to_string(target->pid()), "--steps", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << daemon_.log();
  EXPECT_EQ(ReportRows(r.out), 2) << r.out;
  // The job is named after the process when its environment names none.
  EXPECT_NE(r.out.find("as job pid-" + std::to_string(target->pid()) + "@"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("callsite_train.py:33"), std::string::npos) << "the loss.item() line\n" << r.out;
  EXPECT_EQ(target->Stop(SIGKILL), -SIGKILL);
  EXPECT_EQ(TargetLog("py"), "");
}

TEST_F(AttachPidE2E, AProcessThatForksAfterTheAttachKeepsItsChildInertAndExitsNormally) {
  auto target = StartTarget("fork", {FAKE_TRAIN_BIN, "--steps", "150", "--kernels", "8",
                                     "--sleep-us", "20000", "--fork-at", "100"});
  RunResult r = Cli({"attach", "--pid", std::to_string(target->pid()), "--steps", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(target->Stop(0, std::chrono::seconds(30)), 0);
  EXPECT_EQ(TargetLog("fork"), "");
}

TEST_F(AttachPidE2E, AProcessThatExitsDuringTheCaptureEndsItWithWhatWasCaptured) {
  // ~3 s of steps: the window opens after the 0.2 s start timeout (no NVTX) and runs until the exit.
  auto target = StartTarget("short", {FAKE_TRAIN_BIN, "--steps", "140", "--kernels", "4",
                                      "--sleep-us", "20000"});
  RunResult r = Cli({"attach", "--pid", std::to_string(target->pid()), "--steps", "1000", "--wait", "30s"});
  EXPECT_EQ(r.exit_code, 0) << "the steps it ran are reported: " << r.out << r.err;
  EXPECT_NE(r.out.find("the process is exiting"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PRIMARY BOTTLENECK"), std::string::npos) << r.out;
  EXPECT_EQ(target->Stop(0, std::chrono::seconds(30)), 0);
  // Gone entirely: refused before anything is touched.
  RunResult gone = Cli({"attach", "--pid", std::to_string(target->pid()), "--steps", "1"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.err.find("no process with pid"), std::string::npos) << gone.err;
}

TEST_F(AttachPidE2E, RefusesAndExplainsWhatCannotBeAttached) {
  // Not a CUDA process.
  Process sleeper({"sleep", "30"});
  RunResult r = Cli({"attach", "--pid", std::to_string(sleeper.pid()), "--steps", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("has not loaded CUDA"), std::string::npos) << r.err;
  // CUPTI held by another profiler: the process says so and runs on.
  auto busy = StartTrainer("busy");
  busy->Stop(SIGKILL);
  busy = StartTarget("busy", {FAKE_TRAIN_BIN, "--until-signal", "--handle-signals", "--sleep-us", "20000"},
                     {"FAKE_CUPTI_BUSY=1"});
  r = Cli({"attach", "--pid", std::to_string(busy->pid()), "--steps", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("CUPTI is already in use"), std::string::npos) << r.err;
  EXPECT_EQ(busy->Stop(SIGTERM), 0);
  // No collector: nothing is touched.
  auto train = StartTrainer("nocollector");
  RunResult no = testing::Run({GPUSPY_BIN, "--collector", "127.0.0.1:1", "--timeout", "2", "attach",
                               "--pid", std::to_string(train->pid()), "--steps", "1"},
                              {"GPUSPY_INJECT_LIB=" + std::string(STUB_LIB)});
  EXPECT_EQ(no.exit_code, 1);
  EXPECT_EQ(testing::ReadFile("/proc/" + std::to_string(train->pid()) + "/maps").find("libgpuspy"),
            std::string::npos);
  EXPECT_EQ(train->Stop(SIGTERM), 0);
}

TEST_F(AttachPidE2E, RefusesWhenPtraceIsDenied) {
  RequireRoot();
  // Another user's process.
  auto root_target = StartTrainer("root");
  RunResult r = Cli({"attach", "--pid", std::to_string(root_target->pid()), "--steps", "1"}, As(kNobody));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("belongs to uid 0"), std::string::npos) << r.err;
  EXPECT_EQ(root_target->Stop(SIGTERM), 0);
  // A process of the same user that forbids tracing (PR_SET_DUMPABLE 0).
  std::vector<std::string> argv = As(kNobody);
  for (const char* a : {FAKE_TRAIN_BIN, "--until-signal", "--handle-signals", "--sleep-us", "20000", "--undumpable"}) {
    argv.push_back(a);
  }
  auto hidden = StartTarget("hidden", argv);
  r = Cli({"attach", "--pid", std::to_string(hidden->pid()), "--steps", "1"}, As(kNobody));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("not dumpable"), std::string::npos) << r.err;
  EXPECT_EQ(hidden->Stop(SIGTERM), 0);
  EXPECT_EQ(TargetLog("hidden"), "");
}

}  // namespace
}  // namespace gpuspy
