// gpuspy's injection path on a machine without a GPU driver, loading the CUDA toolkit's REAL
// libcupti: CUPTI refuses (cuptiSubscribe: CUPTI_ERROR_UNKNOWN without a driver) and the core
// must say so in one line, stay inert and leave the program's output and exit code alone. The
// driver's part (cuInit loading CUDA_INJECTION64_PATH) is played by stub_driver_app, because the
// toolkit's stub libcuda never loads it (shown below). The same contract when CUPTI reports
// MULTIPLE_SUBSCRIBERS or NOT_INITIALIZED (a driver too old for it), with the fake CUPTI, which
// can say those.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using testing::RunResult;

// gpuspy's start-up in a process where CUPTI refuses is loading three libraries and one failed
// call (~0.1 s measured here, on a loaded 2-core builder); a second is far above that noise and
// far below a profiler that waits on its collector or CUPTI.
constexpr std::chrono::milliseconds kMaxExtraWall(1000);
constexpr int kAppExitCode = 3;  // stub_driver_app's kExitCode

struct Timed {
  RunResult run;
  std::chrono::milliseconds wall;
};

Timed RunTimed(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  const auto start = std::chrono::steady_clock::now();
  RunResult r = testing::Run(argv, env);
  return {std::move(r), std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)};
}

std::vector<std::string> GpuspyLines(const std::string& err) {
  std::vector<std::string> out;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("gpuspy[", 0) == 0) out.push_back(line);
  }
  return out;
}

class RealCuptiE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* need : {REAL_CUPTI_LIB, STUB_LIBCUDA}) {
      if (std::string(need).empty() || access(need, R_OK) != 0) {
        GTEST_SKIP() << "the CUDA toolkit's libcupti or stub libcuda is absent: '" << need << "'";
      }
    }
  }
  // Nothing may be written where gpuspy would spill, and nothing may be contacted: the
  // collector address is a closed port.
  std::vector<std::string> Env(std::vector<std::string> extra) const {
    extra.push_back("GPUSPY_CUPTI_PATH=" + std::string(REAL_CUPTI_LIB));
    extra.push_back("GPUSPY_COLLECTOR=127.0.0.1:1");
    extra.push_back("GPUSPY_SPILL_DIR=" + spill_dir());
    return extra;
  }
  std::string spill_dir() const { return dir_.path() + "/spill"; }

  void ExpectInertWithOneLine(const std::vector<std::string>& injection_env) {
    const std::vector<std::string> argv = {APP_BIN, STUB_LIBCUDA};
    const Timed plain = RunTimed(argv, {});
    ASSERT_EQ(plain.run.exit_code, kAppExitCode) << plain.run.err;
    ASSERT_NE(plain.run.out.find("threads: 1\n"), std::string::npos) << plain.run.out;
    ASSERT_TRUE(GpuspyLines(plain.run.err).empty()) << plain.run.err;

    const Timed injected = RunTimed(argv, Env(injection_env));
    EXPECT_EQ(injected.run.exit_code, plain.run.exit_code);
    // Same steps and same thread count: no gpuspy thread was left running.
    EXPECT_EQ(injected.run.out, plain.run.out);
    const std::vector<std::string> lines = GpuspyLines(injected.run.err);
    ASSERT_EQ(lines.size(), 1u) << injected.run.err;
    EXPECT_NE(lines[0].find("degraded: cuptiSubscribe: CUPTI_ERROR_UNKNOWN"), std::string::npos)
        << lines[0];
    EXPECT_NE(lines[0].find("runs without profiling"), std::string::npos) << lines[0];
    EXPECT_FALSE(std::filesystem::exists(spill_dir())) << "an inert core spilled";
    EXPECT_LT(injected.wall, plain.wall + kMaxExtraWall);
  }

  testing::TempDir dir_;
};

TEST_F(RealCuptiE2E, StubLibcudaAloneNeverLoadsTheInjection) {
  // Why stub_driver_app plays the driver: with the stub, CUDA_INJECTION64_PATH is never loaded.
  RunResult r = testing::Run({APP_BIN, STUB_LIBCUDA, "--no-stand-in"},
                             Env({"LD_PRELOAD=" + std::string(SHIM_LIB), "GPUSPY_LOG=debug"}));
  EXPECT_EQ(r.exit_code, kAppExitCode);
  EXPECT_NE(r.out.find("cuInit: 34\n"), std::string::npos) << "CUDA_ERROR_STUB_LIBRARY: " << r.out;
  EXPECT_TRUE(GpuspyLines(r.err).empty()) << r.err;
}

TEST_F(RealCuptiE2E, PreloadedShimWithRealCuptiLogsOneLineAndChangesNothing) {
  ExpectInertWithOneLine({"LD_PRELOAD=" + std::string(SHIM_LIB)});
}

TEST_F(RealCuptiE2E, VerboseLoggingStillSaysItOnceAndChangesNothing) {
  ExpectInertWithOneLine({"LD_PRELOAD=" + std::string(SHIM_LIB), "GPUSPY_LOG=debug"});
}

TEST_F(RealCuptiE2E, CoreAsTheInjectionLibraryWithRealCuptiLogsOneLineAndChangesNothing) {
  ExpectInertWithOneLine({"CUDA_INJECTION64_PATH=" + std::string(CORE_LIB)});
}

TEST_F(RealCuptiE2E, AnotherProfilerHoldingCuptiIsNamedInOneLineAndChangesNothing) {
  // The fake CUPTI stands for a process where torch.profiler or Nsight already subscribed.
  const std::vector<std::string> argv = {FAKE_TRAIN_BIN, "--steps", "3", "--kernels", "5"};
  const Timed plain = RunTimed(argv, {"GPUSPY_CUPTI_PATH=" + std::string(FAKE_CUPTI_LIB)});
  ASSERT_EQ(plain.run.exit_code, 0) << plain.run.err;
  const Timed busy = RunTimed(argv, {"LD_PRELOAD=" + std::string(SHIM_LIB),
                                     "GPUSPY_CUPTI_PATH=" + std::string(FAKE_CUPTI_LIB),
                                     "GPUSPY_COLLECTOR=127.0.0.1:1",
                                     "GPUSPY_SPILL_DIR=" + spill_dir(), "FAKE_CUPTI_BUSY=1"});
  EXPECT_EQ(busy.run.exit_code, plain.run.exit_code);
  EXPECT_EQ(busy.run.out, plain.run.out);
  const std::vector<std::string> lines = GpuspyLines(busy.run.err);
  ASSERT_EQ(lines.size(), 1u) << busy.run.err;
  EXPECT_NE(lines[0].find("CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("already in use by another profiler"), std::string::npos) << lines[0];
  EXPECT_FALSE(std::filesystem::exists(spill_dir())) << "an inert core spilled";
  EXPECT_LT(busy.wall, plain.wall + kMaxExtraWall);
}

TEST_F(RealCuptiE2E, ADriverTooOldForCuptiIsNamedWithItsLikelyCause) {
  // The fake CUPTI answers cuptiSubscribe as CUPTI does with a driver older than its toolkit.
  const std::vector<std::string> argv = {FAKE_TRAIN_BIN, "--steps", "2", "--kernels", "3"};
  const Timed plain = RunTimed(argv, {"GPUSPY_CUPTI_PATH=" + std::string(FAKE_CUPTI_LIB)});
  ASSERT_EQ(plain.run.exit_code, 0) << plain.run.err;
  const Timed old = RunTimed(argv, {"LD_PRELOAD=" + std::string(SHIM_LIB),
                                    "GPUSPY_CUPTI_PATH=" + std::string(FAKE_CUPTI_LIB),
                                    "GPUSPY_COLLECTOR=127.0.0.1:1",
                                    "GPUSPY_SPILL_DIR=" + spill_dir(), "FAKE_CUPTI_OLD_DRIVER=1"});
  EXPECT_EQ(old.run.exit_code, plain.run.exit_code);
  EXPECT_EQ(old.run.out, plain.run.out);
  const std::vector<std::string> lines = GpuspyLines(old.run.err);
  ASSERT_EQ(lines.size(), 1u) << old.run.err;
  EXPECT_NE(lines[0].find("cuptiSubscribe: CUPTI_ERROR_NOT_INITIALIZED"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("CUDA driver older"), std::string::npos) << lines[0];
  EXPECT_FALSE(std::filesystem::exists(spill_dir())) << "an inert core spilled";
}

}  // namespace
}  // namespace gpuspy
