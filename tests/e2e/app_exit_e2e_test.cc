// How profiled processes end and multiply, with gpuspy injected: every exit path (return, exit()
// from another thread, _exit, abort, SIGTERM/SIGINT handled or not), with the collector up and
// with it frozen (the worst case for the final flush), must end the process promptly with the exit
// status the application chose; fork without exec, fork+exec, posix_spawn and Python's
// multiprocessing must each behave: children that exec are profiled on their own, forked copies
// stay inert.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_format.h"
#include "tests/e2e/fault_harness.h"

namespace gpuspy::testing {
namespace {

using Clock = std::chrono::steady_clock;

// The final flush may take this long; the tests allow it plus generous slack for a loaded machine.
constexpr int kExitTimeoutMs = 1000;
constexpr auto kExitBound = std::chrono::seconds(15);

struct ExitCase {
  const char* name;
  std::vector<std::string> args;
  int signal = 0;          // sent once the program is stepping (0: it ends by itself)
  int exit_code = 0;       // what the test expects (-signal when killed by one)
  bool complete = false;   // everything it did is delivered (with the collector up)
};

std::ostream& operator<<(std::ostream& os, const ExitCase& c) { return os << c.name; }

const ExitCase kExitCases[] = {
    {"Return", {"--steps", "8"}, 0, 0, true},
    {"ExitFromAnotherThread", {"--steps", "8", "--end", "exit-thread"}, 0, 0, false},
    {"UnderscoreExit", {"--steps", "8", "--end", "_exit"}, 0, 0, false},
    {"Abort", {"--steps", "8", "--end", "abort"}, 0, -SIGABRT, false},
    {"SigtermHandled", {"--steps", "4", "--until-signal", "--handle-signals"}, SIGTERM, 0, true},
    {"SigintHandled", {"--steps", "4", "--until-signal", "--handle-signals"}, SIGINT, 0, true},
    {"SigtermDefault", {"--steps", "4", "--until-signal"}, SIGTERM, -SIGTERM, false},
    {"SigintDefault", {"--steps", "4", "--until-signal"}, SIGINT, -SIGINT, false},
};

class AppExit : public ::testing::TestWithParam<std::tuple<ExitCase, bool>> {
 protected:
  // Runs the case; returns how long the process took from the end of its work to its exit.
  void RunCase(const ExitCase& c, bool frozen) {
    FaultyDaemon daemon(dir_.path());
    ASSERT_TRUE(daemon.Start()) << daemon.log();
    const std::string job = std::string(c.name) + (frozen ? "-frozen" : "");
    std::vector<std::string> env = InjectEnv(job, daemon.public_address(), dir_.path() + "/spill");
    env.push_back("GPUSPY_EXIT_TIMEOUT_MS=" + std::to_string(kExitTimeoutMs));
    env.push_back("GPUSPY_ACK_TIMEOUT_MS=1000");
    const std::string expect = dir_.path() + "/expect.json", ready = dir_.path() + "/ready";
    std::vector<std::string> argv = {FAKE_TRAIN_BIN, "--kernels", "10", "--sleep-us", "20000",
                                     "--expect", expect, "--ready-file", ready};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    Process app(argv, dir_.path() + "/app.log", env);
    auto start = Clock::now();
    if (c.signal != 0) {
      while (access(ready.c_str(), F_OK) != 0 && app.running() &&
             Clock::now() - start < std::chrono::seconds(30)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    // Frozen while the program is still working: its final flush meets a collector whose socket
    // accepts but never answers.
    if (frozen) daemon.Freeze();
    if (c.signal != 0) {
      start = Clock::now();
      kill(app.pid(), c.signal);
    }
    while (app.running() && Clock::now() - start < std::chrono::seconds(60)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const auto took = Clock::now() - start;
    const int code = app.Stop(SIGKILL, std::chrono::milliseconds(100));
    const std::string log = ReadFile(dir_.path() + "/app.log");
    EXPECT_EQ(code, c.exit_code) << log;
    EXPECT_LT(took, kExitBound + (c.signal == 0 ? std::chrono::seconds(5) : std::chrono::seconds(0)))
        << "the process hung on its way out: " << log;
    Record(absl::StrFormat("exit path %-22s collector %-6s: exit code %d after %.0f ms", c.name,
                           frozen ? "frozen" : "up", code,
                           std::chrono::duration<double, std::milli>(took).count()));
    daemon.Thaw();
    if (frozen) return;
    const auto got = CollectJob(daemon.address(), job);
    ASSERT_EQ(got.size(), 1u) << log;
    if (c.complete) {
      ExpectAccountedFor(ReadJson(expect), got.begin()->second);
      EXPECT_EQ(got.begin()->second.dropped(), 0u);
    } else if (c.exit_code == 0) {
      // The steps finished before the exit began are all there.
      for (int s = 0; s < 4; ++s) {
        EXPECT_EQ(got.begin()->second.nvtx_ranges.count("ProfilerStep#" + std::to_string(s)), 1u)
            << s << "\n" << log;
      }
    }
  }

  TempDir dir_;
};

TEST_P(AppExit, EndsPromptlyWithItsOwnExitStatus) {
  RunCase(std::get<0>(GetParam()), std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(
    Paths, AppExit, ::testing::Combine(::testing::ValuesIn(kExitCases), ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<ExitCase, bool>>& info) {
      return std::string(std::get<0>(info.param).name) +
             (std::get<1>(info.param) ? "CollectorFrozen" : "CollectorUp");
    });

class ProcessModels : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(daemon_.Start()) << daemon_.log(); }
  std::vector<std::string> Env(const std::string& job) {
    return InjectEnv(job, daemon_.public_address(), dir_.path() + "/spill");
  }
  TempDir dir_;
  FaultyDaemon daemon_{dir_.path()};
};

TEST_F(ProcessModels, ForkedChildEndingWithExitIsInertAndTheParentIsComplete) {
  // The child runs the exit handlers of its inherited copy of gpuspy: they must not flush,
  // join threads that do not exist in it, or touch the parent's connection.
  const std::string expect = dir_.path() + "/expect.json";
  RunResult r = testing::Run({FAKE_TRAIN_BIN, "--steps", "3", "--fork-exit", "--expect", expect},
                    Env("forkexit"), std::chrono::seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto got = CollectJob(daemon_.address(), "forkexit");
  ASSERT_EQ(got.size(), 1u) << "the forked child registered itself: " << r.err;
  ExpectAccountedFor(ReadJson(expect), got.begin()->second);
}

TEST_F(ProcessModels, PosixSpawnedChildIsProfiledAsItsOwnProcess) {
  // posix_spawn (CLONE_VM | CLONE_VFORK in glibc: no fork handlers run) then exec: a fresh
  // process, injected afresh through the inherited environment.
  const std::string expect = dir_.path() + "/expect.json";
  RunResult r = testing::Run({FAKE_TRAIN_BIN, "--steps", "3", "--spawn-child", "--expect", expect},
                    Env("spawn"), std::chrono::seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto got = CollectJob(daemon_.address(), "spawn");
  ASSERT_EQ(got.size(), 2u) << r.err;
  int parents = 0;
  for (const auto& [id, p] : got) {
    if (p.nvtx_ranges.size() == 3) {
      ++parents;
      ExpectAccountedFor(ReadJson(expect), p);
    } else {
      EXPECT_EQ(p.nvtx_ranges.size(), 2u) << "the child's two steps";
      EXPECT_EQ(p.by_kind.at("kernels"), 2 * (3 + 1 + 1 + 3));
    }
  }
  EXPECT_EQ(parents, 1);
}

TEST_F(ProcessModels, PythonMultiprocessingSpawnForkAndDataLoaderWorkers) {
  if (testing::Run({"python3", "-c", "import ctypes, multiprocessing"}).exit_code != 0) {
    GTEST_SKIP() << "python3 with ctypes is not installed";
  }
  std::vector<std::string> env = Env("python");
  env.push_back(std::string("FAKE_CUPTI_LIB=") + FAKE_CUPTI_LIB);
  const auto start = Clock::now();
  RunResult r = testing::Run({"python3", std::string(SOURCE_DIR) + "/tests/e2e/mp_train.py"}, env,
                    std::chrono::seconds(120));
  const double took_s = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("'spawn': 0, 'fork': 0, 'dataloader': 0"), std::string::npos) << r.out;
  Record(absl::StrFormat("python multiprocessing (spawn, fork, os._exit worker): %.1f s", took_s));
  // The parent and the spawned interpreter; the forked child's gpuspy stayed inert and the
  // DataLoader worker never loaded CUDA.
  const auto got = CollectJob(daemon_.address(), "python");
  ASSERT_EQ(got.size(), 2u) << r.err;
  std::set<std::string> steps;
  for (const auto& [id, p] : got) {
    for (const auto& [name, n] : p.nvtx_ranges) {
      EXPECT_EQ(n, 1) << name;
      steps.insert(name);
    }
  }
  const std::set<std::string> want = {"ProfilerStep#0",   "ProfilerStep#1",   "ProfilerStep#2",
                                      "ProfilerStep#3",   "ProfilerStep#4",   "ProfilerStep#100",
                                      "ProfilerStep#101", "ProfilerStep#102"};
  EXPECT_EQ(steps, want) << "steps 200-201 come from the forked child and must not be there";
}

}  // namespace
}  // namespace gpuspy::testing
