// One step laid out for the web timeline (analysis/step_timeline.h): lanes in first-seen order
// with host threads first, times relative to the step's start, shared strings interned once,
// idle time shaded with the idle attribution's causes, blocking calls on their thread's lane.
#include "analysis/step_timeline.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "analysis/idle_attribution.h"

namespace gpuspy::analysis {
namespace {

constexpr int64_t kOrigin = 1'700'000'000'000'000'000;
constexpr int64_t us = 1'000;

// A launch on thread 7, its kernel on GPU 0 stream 3, a stream synchronize on the same thread
// that waits for it, then host work with the GPU idle until the window's end.
struct LaunchThenSync {
  StringTable strings;
  EventColumns events;
  Interval window{kOrigin, kOrigin + 1'000 * us};

  LaunchThenSync() {
    const StringRef launch = strings.Intern("cudaLaunchKernel");
    const StringRef sync = strings.Intern("cudaStreamSynchronize");
    const StringRef gemm = strings.Intern("sm80_gemm");
    const StreamKey stream{0, 1, 3};
    events.apis.push_back({kOrigin + 10 * us, kOrigin + 15 * us, 1, ApiDomain::kRuntime, 211, launch, 7, 0});
    events.kernels.push_back({kOrigin + 20 * us, kOrigin + 400 * us, 1, gemm, stream, {4, 1, 1, 128, 1, 1, 32, 0, 1024}, 0});
    events.apis.push_back({kOrigin + 20 * us, kOrigin + 405 * us, 2, ApiDomain::kRuntime, 131, sync, 7, 0});
    events.apis.push_back({kOrigin + 900 * us, kOrigin + 905 * us, 3, ApiDomain::kRuntime, 211, launch, 7, 0});
  }
};

TEST(StepTimeline, LanesAreHostThreadsFirstThenStreamsWithTimesFromTheStepStart) {
  LaunchThenSync s;
  const v1::StepTimeline t = BuildStepTimeline(s.events, s.strings, s.window, /*truncated=*/false);
  EXPECT_EQ(t.origin_ns(), kOrigin);
  EXPECT_EQ(t.wall_ns(), 1'000 * us);
  EXPECT_FALSE(t.truncated());
  ASSERT_EQ(t.lanes_size(), 2);
  EXPECT_EQ(t.lanes(0).thread_id(), 7u);
  EXPECT_EQ(t.lanes(0).label(), "thread 7");
  ASSERT_TRUE(t.lanes(1).has_stream());
  EXPECT_EQ(t.lanes(1).stream().device(), 0u);
  EXPECT_EQ(t.lanes(1).stream().stream(), 3u);
  EXPECT_EQ(t.lanes(1).label(), "GPU 0 stream 3");

  const v1::TimelineEvents& ev = t.events();
  ASSERT_EQ(ev.lane_size(), 4);  // three calls, one kernel
  for (const auto* column : {&ev.kind(), &ev.name(), &ev.info()}) EXPECT_EQ(column->size(), 4);
  EXPECT_EQ(ev.start_ns_size(), 4);
  EXPECT_EQ(ev.correlation_id_size(), 4);
  // The kernel, after the host's events: its lane, kind, relative times, name and launch shape.
  EXPECT_EQ(ev.lane(3), 1);
  EXPECT_EQ(t.kinds(ev.kind(3)), "kernel");
  EXPECT_EQ(ev.start_ns(3), 20 * us);
  EXPECT_EQ(ev.end_ns(3), 400 * us);
  EXPECT_EQ(t.strings(ev.name(3)), "sm80_gemm");
  EXPECT_EQ(t.strings(ev.info(3)), "grid (4,1,1) block (128,1,1), 32 regs, 1024 B shared");
  EXPECT_EQ(ev.correlation_id(3), 1u);
  // The two launches share one string; strings[0] is the empty one.
  EXPECT_EQ(t.strings(0), "");
  EXPECT_EQ(ev.name(0), ev.name(2));
  EXPECT_EQ(t.kinds(ev.kind(0)), "api");
  EXPECT_EQ(t.strings(ev.info(0)), "runtime API");
}

TEST(StepTimeline, IdleShadingIsTheIdleAttributionsCausesAndAddsUpToTheIdleTime) {
  LaunchThenSync s;
  const v1::StepTimeline t = BuildStepTimeline(s.events, s.strings, s.window, false);
  const IdleAttribution idle = AttributeIdle(s.events, s.strings, s.window);
  ASSERT_EQ(t.idle_causes_size(), 5);
  EXPECT_EQ(t.idle_causes(0), "sync_blocked");
  int64_t shaded_ns = 0;
  int64_t sync_ns = 0;
  for (const v1::TimelineIdleSpan& span : t.idle()) {
    ASSERT_GE(span.cause(), 0);
    ASSERT_LT(span.cause(), t.idle_causes_size());
    EXPECT_LE(0, span.start_ns());
    EXPECT_LE(span.end_ns(), t.wall_ns());
    shaded_ns += span.end_ns() - span.start_ns();
    if (t.idle_causes(span.cause()) == "sync_blocked") sync_ns += span.end_ns() - span.start_ns();
  }
  EXPECT_EQ(shaded_ns, idle.idle.TotalLength());
  EXPECT_EQ(sync_ns, idle.sync_blocked.TotalLength());
  EXPECT_GT(sync_ns, 0);  // at least the synchronize's last 5 us, after the kernel ended
}

TEST(StepTimeline, ABlockingCallIsDrawnOnItsThreadsLane) {
  LaunchThenSync s;
  const v1::StepTimeline t = BuildStepTimeline(s.events, s.strings, s.window, false);
  ASSERT_EQ(t.blocking_size(), 1);
  EXPECT_EQ(t.blocking(0).lane(), 0);  // thread 7
  EXPECT_EQ(t.blocking(0).start_ns(), 20 * us);
  EXPECT_EQ(t.blocking(0).end_ns(), 405 * us);
}

TEST(StepTimeline, AnEmptyStepHasNoEventsButItsLengthAndTheKindNames) {
  StringTable strings;
  const v1::StepTimeline t = BuildStepTimeline({}, strings, {kOrigin, kOrigin + 5 * us}, /*truncated=*/true);
  EXPECT_EQ(t.wall_ns(), 5 * us);
  EXPECT_TRUE(t.truncated());
  EXPECT_EQ(t.events().lane_size(), 0);
  EXPECT_EQ(t.lanes_size(), 0);
  ASSERT_EQ(t.strings_size(), 1);
  ASSERT_EQ(t.kinds_size(), 9);
  EXPECT_EQ(t.kinds(0), "kernel");
  EXPECT_EQ(t.kinds(8), "graph");
}

TEST(StepTimeline, NamesThatAreNotUtf8ComeThroughAsTheirBytes) {
  LaunchThenSync s;
  s.events.kernels[0].name = s.strings.Intern(std::string("bad\xff kernel"));
  const v1::StepTimeline t = BuildStepTimeline(s.events, s.strings, s.window, false);
  EXPECT_EQ(t.strings(t.events().name(3)), std::string("bad\xff kernel"));
  std::string wire;
  EXPECT_TRUE(t.SerializeToString(&wire));  // `bytes`, so gRPC can carry it
  v1::StepTimeline back;
  EXPECT_TRUE(back.ParseFromString(wire));
  EXPECT_EQ(back.strings(back.events().name(3)), std::string("bad\xff kernel"));
}

TEST(StepTimeline, HostLanesAreNamedFromThePidAndTheTracesThreadNames) {
  LaunchThenSync s;
  const StringRef pin = s.strings.Intern("pin");
  s.events.nvtx_marks.push_back({kOrigin + 30 * us, 0, pin, 9});
  s.events.nvtx_marks.push_back({kOrigin + 31 * us, 0, pin, 11});
  HostThreads threads{.pid = 7, .names = {{9, "thread 9 (pt_pin_memory)"}, {11, "thread 11 (pt_data_worker_1)"}}};
  const v1::StepTimeline t = BuildStepTimeline(s.events, s.strings, s.window, false, threads);
  std::vector<std::string> labels;
  for (const auto& l : t.lanes()) labels.push_back(l.label());
  EXPECT_EQ(labels, (std::vector<std::string>{"main thread", "pin-memory thread", "dataloader worker 1",
                                              "GPU 0 stream 3"}));
}

TEST(StepTimeline, NestedNvtxRangesRecordedAtDepthZeroComeOutInRowsOfTheirNesting) {
  LaunchThenSync s;
  const StringRef step = s.strings.Intern("ProfilerStep#5"), zero = s.strings.Intern("zero_grad");
  const StringRef fwd = s.strings.Intern("DDP.forward");
  s.events.nvtx_ranges.push_back({kOrigin, kOrigin + 900 * us, 0, step, 7, 0});
  s.events.nvtx_ranges.push_back({kOrigin + 1 * us, kOrigin + 9 * us, 0, zero, 7, 0});
  s.events.nvtx_ranges.push_back({kOrigin + 10 * us, kOrigin + 500 * us, 0, fwd, 7, 0});
  const v1::StepTimeline t = BuildStepTimeline(s.events, s.strings, s.window, false);
  std::map<std::string, uint32_t> depth;
  for (int i = 0; i < t.events().lane_size(); ++i) {
    if (t.kinds(t.events().kind(i)) == "nvtx") depth[t.strings(t.events().name(i))] = t.events().depth(i);
  }
  EXPECT_EQ(depth, (std::map<std::string, uint32_t>{{"ProfilerStep#5", 0}, {"zero_grad", 1}, {"DDP.forward", 1}}));
}

}  // namespace
}  // namespace gpuspy::analysis
