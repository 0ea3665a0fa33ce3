// The host sampler against a real interpreter (LIBPYTHON, one binary per installed CPython): the
// test's main thread plays the training loop (its "CUDA calls" go through CallSites as CUPTI's
// callbacks would) and runs Python with known lines between them; the sampler thread asks
// CPython for the main thread's line and never touches Python itself.
#include "inject/core/host_sampler.h"

#include <gtest/gtest.h>
#include <time.h>

#include <cstdlib>
#include <map>
#include <string>

#include "inject/core/python_frames.h"
#include "tests/support/embedded_python.h"

namespace gpuspy::inject {
namespace {

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

CallSiteConfig Config() {
  CallSiteConfig c;
  c.frames.native = false;
  c.frames.base_dir = "/proj";
  c.frames.skip.push_back("<string>");  // the harness's own exec line
  c.frames.callers = 0;
  return c;
}

class HostSamplerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string error;
    run_ = testing::StartEmbeddedPython(LIBPYTHON, &error);
    ASSERT_NE(run_, nullptr) << error;
    // Imports before any test's gap: an import is host work too, and would be sampled.
    ASSERT_EQ(run_("import ctypes, time\nlibc = ctypes.CDLL(None)\n"), 0);
  }

  void SetUp() override {
    sites_ = std::make_unique<CallSites>(Config());
    sites_->SetWatching(true);
  }

  // One short CUDA call of ours on this (the main) thread: the host gap starts after it.
  void CudaCall() {
    sites_->OnEnter(CallSiteKind::kLaunch, ++correlation_);
    sites_->OnExit(CallSiteKind::kLaunch);
  }

  // Runs `body` as the file /proj/<file> for about `seconds`: `spin()` runs a loop of Python
  // that calls into C releasing the GIL (what a PyTorch op does) at line 4 of the file.
  void Spin(const std::string& file, double seconds, bool release_gil = true) {
    const std::string call = release_gil ? "libc.getpid()" : "x += 1";
    const std::string source =
        "\\n"
        "\\n"
        "def spin(t, x=0):\\n"
        "    while time.monotonic() < t: " + call + "\\n"
        "spin(time.monotonic() + " + std::to_string(seconds) + ")\\n";
    const std::string script =
        "exec(compile('" + source + "', '/proj/" + file + "', 'exec'), "
        "{'__name__': '__main__', 'time': time, 'libc': libc})\n";
    ASSERT_EQ(run_(script.c_str()), 0) << script;
  }

  // Sample texts -> count, drained from the sampler.
  std::map<std::string, int> Drain(HostSampler* sampler) {
    std::map<std::string, int> out;
    int64_t last = 0;
    sampler->samples()->Drain([&](uint64_t timestamp, uint32_t site) {
      EXPECT_GE(static_cast<int64_t>(timestamp), last);  // the event clock moves forward
      last = static_cast<int64_t>(timestamp);
      out[std::string(sites_->registry()->Text(site))]++;
    });
    return out;
  }

  std::unique_ptr<CallSites> sites_;
  uint64_t correlation_ = 0;
  static inline testing::RunPython run_ = nullptr;
};

TEST_F(HostSamplerTest, SamplesNameTheLineTheMainThreadRunsInAHostGap) {
  HostSampler sampler(1000, sites_.get(), [] { return static_cast<int64_t>(MonotonicNs()); });
  ASSERT_TRUE(sampler.Start());
  CudaCall();
  Spin("metrics.py", 0.3);
  sampler.Stop();
  const std::map<std::string, int> got = Drain(&sampler);
  int all = 0;
  for (const auto& [site, n] : got) all += n;
  const auto spin = got.find("metrics.py:4 spin");
  ASSERT_NE(spin, got.end()) << (got.empty() ? "no samples" : got.begin()->first);
  // 300 ms at 1 kHz; a loaded machine wakes the sampler less often, never more.
  EXPECT_GE(spin->second, 20);
  EXPECT_LE(all, 300);
  // The loop's line, but for the odd sample a slow machine takes while the script is still being
  // compiled and started (its module line) after the gap's first 200 us.
  EXPECT_GE(spin->second * 10, all * 9);
  EXPECT_EQ(sampler.counters().samples.load(), static_cast<uint64_t>(all));
  EXPECT_GT(sampler.counters().capture_ns.load(), 0u);
  EXPECT_NE(sampler.thread_id(), 0u);
}

TEST_F(HostSamplerTest, NothingIsSampledInsideACudaCallOrBeforeTheFirstOne) {
  HostSampler sampler(1000, sites_.get(), [] { return static_cast<int64_t>(MonotonicNs()); });
  ASSERT_TRUE(sampler.Start());
  Spin("before.py", 0.1);  // no CUDA call yet: the process is not using the GPU
  sites_->OnEnter(CallSiteKind::kBlocking, ++correlation_);
  Spin("inside.py", 0.1);  // a sync waiting (here: Python inside the call, as a callback would)
  sites_->OnExit(CallSiteKind::kBlocking);
  sampler.Stop();
  EXPECT_TRUE(Drain(&sampler).empty());
  EXPECT_EQ(sampler.counters().requested.load(), 0u);
  EXPECT_GT(sampler.counters().ticks.load(), 0u);
}

TEST_F(HostSamplerTest, AStretchThatNeverLetsGoOfTheGilIsSampledOnlyWhereCPythonChecks) {
  HostSampler sampler(1000, sites_.get(), [] { return static_cast<int64_t>(MonotonicNs()); });
  ASSERT_TRUE(sampler.Start());
  CudaCall();
  Spin("pure.py", 0.2, /*release_gil=*/false);
  sampler.Stop();
  const std::map<std::string, int> got = Drain(&sampler);
  const std::string lib = LIBPYTHON;
  const size_t at = lib.rfind("python3.");
  ASSERT_NE(at, std::string::npos) << lib;
  const int minor = std::atoi(lib.c_str() + at + 8);
  if (minor >= 12) {
    // The eval breaker is set from any thread: the pure loop itself is sampled.
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got.begin()->first, "pure.py:4 spin");
  } else {
    // 3.9-3.11 only look at pending calls when the main thread takes the GIL again: the one
    // queued in the loop runs after it, too late to be a sample of it, and is dropped.
    EXPECT_TRUE(got.empty()) << got.begin()->first;
    EXPECT_GE(sampler.counters().late.load() + sampler.counters().requested.load(), 1u);
  }
}

TEST_F(HostSamplerTest, TheSamplerAsksOnlyInAHostGapAndOneCaptureAtATime) {
  HostSampler sampler(1000, sites_.get(), [] { return static_cast<int64_t>(MonotonicNs()); });
  // Not started: Tick is the sampler thread's decision alone; what it queues runs in the next
  // Spin and finds no running sampler (a no-op).
  CudaCall();
  const uint64_t entered = sites_->main_thread().last_enter_ns;
  ASSERT_NE(entered, 0u);
  EXPECT_FALSE(sampler.Tick(entered + kMinSampledGapNs - 1));  // launch overhead, not a gap
  EXPECT_FALSE(sampler.Tick(entered + kMaxSampledGapNs + 1));  // done with the GPU
  EXPECT_TRUE(sampler.Tick(entered + kMinSampledGapNs));
  EXPECT_FALSE(sampler.Tick(entered + kMinSampledGapNs + 1));  // the first has not run yet
  // One that has not run within the delay bound (10 ms at 1 kHz) is given up on.
  EXPECT_TRUE(sampler.Tick(entered + kMinSampledGapNs + kMinSampleDelayBoundNs));
  sites_->SetWatching(false);  // tracing off: the main thread reads as "no call yet"
  EXPECT_FALSE(sampler.Tick(entered + 2 * kMinSampleDelayBoundNs));
  Spin("drain.py", 0.01);
  EXPECT_EQ(sampler.counters().samples.load(), 0u);
}

TEST_F(HostSamplerTest, ZeroHzNeverStarts) {
  HostSampler sampler(0, sites_.get(), [] { return int64_t{0}; });
  EXPECT_FALSE(sampler.Start());
  EXPECT_FALSE(sampler.running());
}

}  // namespace
}  // namespace gpuspy::inject
