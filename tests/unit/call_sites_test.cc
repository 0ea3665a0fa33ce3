// Call sites in a process without CPython (this test binary): the frame walker stays inert, the
// native fallback names the caller, sites intern to stable ids, the correlation queue and the
// pipeline-side join, and the blocking/launch sampling policy.
#include "inject/core/call_sites.h"

#include <gtest/gtest.h>

#include <set>
#include <chrono>
#include <thread>

#include "inject/core/call_site_queue.h"
#include "inject/core/call_site_registry.h"
#include "inject/core/python_frames.h"

namespace gpuspy::inject {
namespace {

CallSiteOptions Native(bool native) {
  CallSiteOptions o;
  o.native = native;
  return o;
}

// Two distinct call instructions, never merged: GCC's noipa also stops cloning and identical-code
// folding; clang (the ASan tree) has no such attribute and folds nothing at compile time.
#if defined(__clang__)
#define GPUSPY_DISTINCT_CALL __attribute__((noinline))
#else
#define GPUSPY_DISTINCT_CALL __attribute__((noinline, noipa))
#endif
GPUSPY_DISTINCT_CALL uint32_t CaptureHere(CallSiteRegistry* r) {
  const uint32_t site = r->Capture();
  asm volatile("" ::: "memory");
  return site;
}
GPUSPY_DISTINCT_CALL uint32_t CaptureThere(CallSiteRegistry* r) {
  const uint32_t site = r->Capture();
  asm volatile("" ::: "memory");
  return site;
}

TEST(CallSites, NonPythonProcessHasNoPythonFrameAndNoCrash) {
  EXPECT_FALSE(PythonFrames::Instance().available());
  EXPECT_FALSE(PythonFrames::Instance().ThreadHoldsGil());
  CallSiteRegistry registry(Native(false));
  EXPECT_EQ(registry.Capture(), 0u);
  EXPECT_EQ(registry.stats().none.load(), 1u);
  EXPECT_EQ(registry.stats().python.load(), 0u);
  std::thread([&] { EXPECT_EQ(registry.Capture(), 0u); }).join();
}

TEST(CallSites, NativeFrameNamesTheCallerAndRepeatsCostNoNewSite) {
  CallSiteRegistry registry(Native(true));
  const uint32_t here = CaptureHere(&registry);
  ASSERT_NE(here, 0u);
  EXPECT_EQ(CaptureHere(&registry), here);
  const uint32_t there = CaptureThere(&registry);
  ASSERT_NE(there, 0u);
  EXPECT_NE(there, here);
  EXPECT_EQ(registry.sites(), 2u);
  const std::string text(registry.Text(here));
  EXPECT_EQ(text.rfind("call_sites_test+0x", 0), 0u) << text;
  EXPECT_EQ(text.find(".py:"), std::string::npos) << text;
  EXPECT_EQ(registry.stats().native.load(), 3u);
  EXPECT_EQ(registry.Text(0), "");
  EXPECT_EQ(registry.Text(999), "");
}

TEST(CallSites, PythonPathsAreShownFromTheProjectOrThePackage) {
  EXPECT_EQ(CallSiteRegistry::ShortPath("/home/u/proj/train.py", "/home/u/proj"), "train.py");
  EXPECT_EQ(CallSiteRegistry::ShortPath("/home/u/project/train.py", "/home/u/proj"),
            "/home/u/project/train.py");
  EXPECT_EQ(CallSiteRegistry::ShortPath(
                "/venv/lib/python3.11/site-packages/transformers/trainer.py", "/home/u"),
            "transformers/trainer.py");
  EXPECT_EQ(CallSiteRegistry::ShortPath("/usr/lib/python3/dist-packages/x/y.py", ""), "x/y.py");
  EXPECT_EQ(CallSiteRegistry::FormatPython("train.py", 57, "train_step"), "train.py:57 train_step");
  EXPECT_EQ(CallSiteRegistry::FormatPython("<stdin>", 3, ""), "<stdin>:3");
}

TEST(CallSiteQueue, DeliversMarksInOrderAndDropsWhenFull) {
  CallSiteQueue queue(2);  // 4 cells
  for (uint64_t i = 1; i <= 4; ++i) EXPECT_TRUE(queue.Push(i, static_cast<uint32_t>(i * 10)));
  EXPECT_FALSE(queue.Push(5, 50));
  EXPECT_EQ(queue.dropped(), 1u);
  std::vector<std::pair<uint64_t, uint32_t>> got;
  queue.Drain([&](uint64_t c, uint32_t s) { got.emplace_back(c, s); });
  EXPECT_EQ(got, (std::vector<std::pair<uint64_t, uint32_t>>{{1, 10}, {2, 20}, {3, 30}, {4, 40}}));
  EXPECT_TRUE(queue.Push(6, 60));  // room again
}

TEST(CallSiteQueue, ManyProducersLoseNothingWhileThereIsRoom) {
  CallSiteQueue queue(16);
  constexpr int kThreads = 4, kEach = 10'000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&queue, t] {
      for (int i = 0; i < kEach; ++i) ASSERT_TRUE(queue.Push(t * kEach + i + 1, t + 1));
    });
  }
  std::set<uint64_t> seen;
  size_t drained = 0;
  while (drained < kThreads * kEach) {
    queue.Drain([&](uint64_t c, uint32_t s) {
      EXPECT_EQ(s, (c - 1) / kEach + 1);
      seen.insert(c);
      ++drained;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(queue.dropped(), 0u);
}

TEST(CallSiteJoiner, MarkedApiEventsGetTheirSiteInternedOnce) {
  CallSiteRegistry registry(Native(true));
  const uint32_t here = CaptureHere(&registry);
  const uint32_t there = CaptureThere(&registry);
  CallSiteQueue queue;
  StringTable strings;
  CallSiteJoiner joiner(&queue, &registry, &strings);
  std::vector<ApiEvent> apis(5);
  for (size_t i = 0; i < apis.size(); ++i) apis[i].correlation_id = 100 + i;
  queue.Push(100, here);
  queue.Push(102, here);
  queue.Push(103, there);
  queue.Push(999, there);  // its record never comes
  const size_t strings_before = strings.size();
  joiner.Join(&apis, 0);
  EXPECT_EQ(strings.Get(apis[0].call_site), registry.Text(here));
  EXPECT_EQ(apis[1].call_site, 0u);
  EXPECT_EQ(apis[2].call_site, apis[0].call_site);
  EXPECT_EQ(strings.Get(apis[3].call_site), registry.Text(there));
  EXPECT_EQ(apis[4].call_site, 0u);
  EXPECT_EQ(strings.size(), strings_before + 2);
  EXPECT_EQ(joiner.stats().joined, 3u);
  EXPECT_EQ(joiner.pending(), 1u);
  // Only events from `from` on are joined: the mark for 999 waits, then expires.
  std::vector<ApiEvent> none;
  for (int i = 0; i < 600; ++i) joiner.Join(&none, 0);
  EXPECT_EQ(joiner.pending(), 0u);
  EXPECT_EQ(joiner.stats().expired, 1u);
}

// No gap-ender captures: a loaded machine may pause a thread for longer than any threshold.
CallSiteConfig Fixed(uint32_t period) {
  CallSiteConfig c;
  c.launch_auto = false;
  c.launch_period = period;
  c.gap_us = 0;
  return c;
}

TEST(CallSitesPolicy, EveryBlockingCallAndOneLaunchInNAreCaptured) {
  CallSites sites(Fixed(4));
  uint64_t corr = 1;
  for (int i = 0; i < 12; ++i) {
    sites.OnEnter(CallSiteKind::kLaunch, corr++);
    sites.OnExit(CallSiteKind::kLaunch);
  }
  for (int i = 0; i < 3; ++i) {
    sites.OnEnter(CallSiteKind::kBlocking, corr++);
    sites.OnExit(CallSiteKind::kBlocking);
  }
  std::vector<uint64_t> marked;
  sites.queue()->Drain([&](uint64_t c, uint32_t s) {
    EXPECT_NE(s, 0u);
    marked.push_back(c);
  });
  // A thread's first launch, then every 4th.
  EXPECT_EQ(marked, (std::vector<uint64_t>{1, 5, 9, 13, 14, 15}));
  EXPECT_EQ(sites.counters().launches.load(), 12u);
  EXPECT_EQ(sites.counters().launches_sampled.load(), 3u);
  EXPECT_EQ(sites.counters().blocking.load(), 3u);
}

TEST(CallSitesPolicy, TheLaunchThatEndsAHostGapGetsItsSiteOutsideTheSample) {
  CallSiteConfig config = Fixed(1000);  // the thread's first launch only, by sampling
  config.gap_us = 1000;
  CallSites sites(config);
  auto launch = [&](uint64_t corr) {
    sites.OnEnter(CallSiteKind::kLaunch, corr);
    sites.OnExit(CallSiteKind::kLaunch);
  };
  launch(1);
  launch(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(3));  // host work: a gap of >= 3 ms
  launch(3);
  std::vector<uint64_t> marked;
  sites.queue()->Drain([&](uint64_t c, uint32_t s) {
    EXPECT_NE(s, 0u);
    marked.push_back(c);
  });
  // 1 by sampling, 3 for ending the gap; 2 may follow a preemption of over 1 ms, never needed.
  ASSERT_GE(marked.size(), 2u);
  EXPECT_EQ(marked.front(), 1u);
  EXPECT_EQ(marked.back(), 3u);
  EXPECT_GE(sites.counters().gap_enders.load(), 1u);
  EXPECT_EQ(sites.counters().launches_sampled.load(), 1u);
}

TEST(CallSitesPolicy, NoGapEndersWithLaunchesOff) {
  CallSiteConfig config = Fixed(0);
  config.gap_us = 1;
  CallSites sites(config);
  sites.OnEnter(CallSiteKind::kLaunch, 1);
  sites.OnExit(CallSiteKind::kLaunch);
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  sites.OnEnter(CallSiteKind::kLaunch, 2);
  sites.OnExit(CallSiteKind::kLaunch);
  size_t marked = 0;
  sites.queue()->Drain([&](uint64_t, uint32_t) { ++marked; });
  EXPECT_EQ(marked, 0u);
  EXPECT_EQ(sites.counters().gap_enders.load(), 0u);
}

TEST(CallSitesPolicy, InnerCallReusesTheOuterSiteWithoutWalking) {
  CallSites sites(Fixed(0));  // launches off
  sites.OnEnter(CallSiteKind::kBlocking, 1);  // cudaMemcpy
  sites.OnEnter(CallSiteKind::kBlocking, 2);  // ... its cuMemcpyDtoH
  sites.OnExit(CallSiteKind::kBlocking);
  sites.OnExit(CallSiteKind::kBlocking);
  sites.OnEnter(CallSiteKind::kLaunch, 3);
  sites.OnExit(CallSiteKind::kLaunch);
  std::vector<std::pair<uint64_t, uint32_t>> got;
  sites.queue()->Drain([&](uint64_t c, uint32_t s) { got.emplace_back(c, s); });
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].second, got[1].second);
  EXPECT_EQ(sites.counters().nested.load(), 1u);
  EXPECT_EQ(sites.registry()->stats().native.load(), 1u);  // walked once
  EXPECT_EQ(sites.counters().launches_sampled.load(), 0u);
}

// What sampling costs per launch is a speed figure: bench/call_site_bench (BM_Launch_*_Auto)
// measures it. Here, what holds whatever the machine's speed (an ASan build's first native
// capture took 2 ms under load and made a cost bound here fail).
TEST(CallSitesPolicy, AutoPeriodStaysWithinItsBoundsAndSamplesAtMostOneInTheMinimum) {
  CallSiteConfig config;
  config.gap_us = 0;  // only the 1-in-N sample
  CallSites sites{config};
  EXPECT_EQ(sites.launch_period(), kInitialAutoPeriod);
  constexpr uint64_t kLaunches = 5000;
  for (uint64_t corr = 1; corr <= kLaunches; ++corr) {
    sites.OnEnter(CallSiteKind::kLaunch, corr);
    sites.OnExit(CallSiteKind::kLaunch);
  }
  const uint32_t period = sites.launch_period();
  EXPECT_GE(period, kMinAutoPeriod);
  EXPECT_LE(period, kMaxAutoPeriod);
  const uint64_t sampled = sites.counters().launches_sampled.load();
  EXPECT_GE(sampled, 1u);  // the thread's first launch
  EXPECT_LE(sampled, kLaunches / kMinAutoPeriod + 1);
  EXPECT_GT(sites.counters().capture_ns.load(), 0u);  // every sample's cost is measured
}

}  // namespace
}  // namespace gpuspy::inject
