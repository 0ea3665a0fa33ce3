// The step model and its replay (analysis/replay/): the graph ties GPU work to its launches and
// blocking calls to the work they waited for; the unedited replay reproduces the recording; each
// edit predicts what its twin (the same step built without the cause) measures, and saves
// nothing where the cause costs nothing (the near miss).
#include <gtest/gtest.h>

#include <functional>

#include "analysis/idle_attribution.h"
#include "analysis/replay/edits/edits.h"
#include "analysis/replay/replay.h"
#include "analysis/replay/step_graph.h"
#include "analysis/step_report.h"
#include "tools/replay/timeline.h"

namespace gpuspy::analysis::replay {
namespace {

using synthetic::kMs;
using synthetic::kUs;
using synthetic::Timeline;

// A step built on the synthetic timeline (tools/replay/timeline.h): `body` runs on the host, and
// a final sync makes the window cover the step's GPU work.
struct Step {
  StringTable strings;
  EventColumns events;
  Interval window;
  v1::StepReport report;
  IdleAttribution idle;
  StepWindow step;
  mutable KernelClasses classes;
  std::vector<ClassifiedKernel> kernels;

  explicit Step(const std::function<void(Timeline&)>& body, uint64_t seed = 7) {
    Timeline t(&strings, seed, 1, 1.0, 1.0);
    t.Begin(&events, 1'000'000);
    const int64_t start = t.host();
    body(t);
    t.Sync();
    window = {start, t.host()};
    step = {1, window.start_ns, window.end_ns, "nvtx:test"};
    report = BuildStepReport(events, strings, step, 1);
    idle = AttributeIdle(events, strings, window);
    kernels = ClassifiedKernels(events, strings, window, classes);
  }
  StepContext Context() const { return {events, strings, step, report.breakdown(), idle, classes, kernels}; }
  int64_t wall() const { return window.length(); }
  // What `fix` saves in the replay (0 when it edits nothing).
  int64_t Gain(std::optional<Fix> (*fix)(const StepContext&, const StepGraph&)) const {
    const StepGraph g = BuildStepGraph(events, strings, window);
    const ReplayResult base = Replay(g);
    EXPECT_TRUE(base.ok) << base.error;
    const std::optional<Fix> f = fix(Context(), g);
    if (!f) return 0;
    const ReplayResult edited = Replay(g, f->edit);
    EXPECT_TRUE(edited.ok) << edited.error;
    return base.step_ns - edited.step_ns;
  }
};

// The prediction is within 10 % (or 50 µs) of the twin's measured saving.
void ExpectGainMatchesTwin(const Step& with, const Step& without, int64_t predicted) {
  const int64_t measured = with.wall() - without.wall();
  EXPECT_NEAR(static_cast<double>(predicted), static_cast<double>(measured),
              std::max(50.0 * kUs, 0.10 * static_cast<double>(measured)))
      << "predicted " << predicted / 1e3 << " us, measured " << measured / 1e3 << " us";
}

// Host work in 50 µs pieces: the timeline jitters each piece, and many pieces average out, so
// a twin's host time matches its original's.
void Python(Timeline& t, int64_t ns) {
  for (int64_t done = 0; done < ns; done += 50 * kUs) t.HostWork(std::min<int64_t>(50 * kUs, ns - done));
}

void Kernels(Timeline& t, int n, int64_t ns) {
  for (int i = 0; i < n; ++i) {
    t.Launch(synthetic::kTensorCoreGemms[i % 3], ns);
    t.HostWork(15 * kUs);
  }
}

TEST(StepGraph, TiesWorkToLaunchesAndBlockingCallsToWhatTheyWaitedFor) {
  const Step s([](Timeline& t) {
    Kernels(t, 3, 200 * kUs);
    t.Sync();
    t.HostWork(100 * kUs);
    Kernels(t, 2, 100 * kUs);
  });
  const StepGraph g = BuildStepGraph(s.events, s.strings, s.window);
  ASSERT_EQ(g.threads.size(), 1u);
  EXPECT_EQ(g.main_thread, 0);
  EXPECT_EQ(g.launched_ops(), 5u);
  EXPECT_EQ(g.carried_events, 0u);
  // Launch, launch, launch, sync (waits for the third kernel), launch, launch, final sync.
  const std::vector<HostCall>& calls = g.threads[0].calls;
  ASSERT_EQ(calls.size(), 7u);
  EXPECT_EQ(calls[0].launches.size(), 1u);
  EXPECT_TRUE(calls[3].blocking);
  ASSERT_GE(calls[3].waits_for, 0);
  EXPECT_EQ(g.ops[calls[3].waits_for].end_ns, s.events.kernels[2].end_ns);
  EXPECT_EQ(g.ops[calls[1].launches[0]].prev_on_stream, calls[0].launches[0]);
  EXPECT_GE(g.launch_latency_ns, kMinLaunchLatencyNs);
}

TEST(StepGraph, InfersAWaitOnAnotherStream) {
  const Step s([](Timeline& t) {
    Kernels(t, 2, 300 * kUs);
    t.WaitStream(synthetic::kNcclStream, synthetic::kComputeStream);
    t.Launch(synthetic::kNcclAllReduceSimple, 200 * kUs, synthetic::kNcclStream,
             t.gpu_free(synthetic::kComputeStream));
    t.HostWork(15 * kUs);
  });
  const StepGraph g = BuildStepGraph(s.events, s.strings, s.window);
  int nccl = -1;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].kernel != nullptr && g.ops[i].kernel->stream.stream_id == synthetic::kNcclStream) {
      nccl = static_cast<int>(i);
    }
  }
  ASSERT_GE(nccl, 0);
  ASSERT_GE(g.ops[nccl].dependency, 0);
  EXPECT_EQ(g.ops[g.ops[nccl].dependency].end_ns, s.events.kernels[1].end_ns);
}

TEST(Replay, UneditedReplayReproducesTheRecordedStep) {
  const Step s([](Timeline& t) {
    t.Copy(CopyKind::kHtoD, 8 << 20, false, true);
    Kernels(t, 10, 150 * kUs);
    t.Item();
    t.HostWork(2 * kMs);
    Kernels(t, 40, 5 * kUs);
    t.Free(t.Malloc(1 << 20));
  });
  const ReplayResult r = Replay(BuildStepGraph(s.events, s.strings, s.window));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.step_ns, s.wall());
  EXPECT_TRUE(s.report.replay().available());
  EXPECT_EQ(s.report.replay().replayed_ns(), s.wall());
}

TEST(Replay, AStepWithoutCudaCallsSaysItCannotBeReplayed) {
  Step s([](Timeline& t) { Kernels(t, 3, 100 * kUs); });
  s.events.apis.clear();
  s.report = BuildStepReport(s.events, s.strings, s.step, 1);
  EXPECT_FALSE(s.report.replay().available());
  EXPECT_NE(s.report.replay().unavailable_reason().find("no CUDA calls"), std::string::npos);
}

// ---- sync_stall: blocking calls return at once ----
// Four kernels, .item(), then `python_ns` of host work on the value, three times.
std::function<void(Timeline&)> ItemThenPython(int64_t python_ns, bool item) {
  return [=](Timeline& t) {
    for (int i = 0; i < 3; ++i) {
      Kernels(t, 4, 200 * kUs);
      if (item) t.Item();
      Python(t, python_ns);
    }
  };
}

TEST(SyncFix, SavesWhatTheHostWouldHaveOverlapped) {
  const Step with(ItemThenPython(500 * kUs, true)), without(ItemThenPython(500 * kUs, false));
  const int64_t gain = with.Gain(&SyncFix);
  EXPECT_GT(gain, 1 * kMs);
  ExpectGainMatchesTwin(with, without, gain);
}

TEST(SyncFix, NearMissHostWorkLongerThanTheGpuWorkIsNotTheSyncs) {
  // 5 ms of Python after each .item(): without the sync the GPU would still run dry, so the sync
  // saves only the ~0.8 ms of GPU work it made the host wait for, not the 5 ms.
  const Step with(ItemThenPython(5 * kMs, true)), without(ItemThenPython(5 * kMs, false));
  const int64_t gain = with.Gain(&SyncFix);
  EXPECT_LT(gain, 3 * kMs);
  ExpectGainMatchesTwin(with, without, gain);
}

// ---- host_bound: the named range costs nothing ----
TEST(HostWorkFix, TheNamedRangeCostsNothing) {
  auto body = [](bool metrics) {
    return [=](Timeline& t) {
      Kernels(t, 10, 300 * kUs);
      if (metrics) {
        const int64_t start = t.host();
        Python(t, 20 * kMs);
        t.Range("compute_metrics", start, t.host(), 1);
      }
      Kernels(t, 10, 300 * kUs);
    };
  };
  const Step with(body(true)), without(body(false));
  const int64_t gain = with.Gain(&HostWorkFix);
  EXPECT_GT(gain, 10 * kMs);
  ExpectGainMatchesTwin(with, without, gain);
}

TEST(HostWorkFix, NearMissHostWorkHiddenBehindQueuedGpuWorkSavesNothing) {
  // 2 ms of Python while 6 ms of GPU work is queued: the GPU never waits, nothing to save.
  const Step s([](Timeline& t) {
    Kernels(t, 20, 300 * kUs);
    const int64_t start = t.host();
    t.HostWork(2 * kMs);
    t.Range("compute_metrics", start, t.host(), 1);
    Kernels(t, 2, 300 * kUs);
  });
  EXPECT_LT(s.Gain(&HostWorkFix), 50 * kUs);
}

// ---- input_stall: data loading hidden behind the previous step ----
TEST(InputFix, TheLeadingWaitForTheBatchGoes) {
  auto body = [](int64_t input_ns) {
    return [=](Timeline& t) {
      Python(t, input_ns);
      Kernels(t, 10, 300 * kUs);
    };
  };
  const Step with(body(8 * kMs)), without(body(0));
  const int64_t gain = with.Gain(&InputFix);
  EXPECT_GT(gain, 6 * kMs);
  ExpectGainMatchesTwin(with, without, gain);
}

// ---- copy_dominated: pinned, non_blocking, on a side stream ----
TEST(CopyFix, APageableCopyOverlapsComputeOnceFixed) {
  auto body = [](bool fixed) {
    return [=](Timeline& t) {
      if (fixed) {
        t.Copy(CopyKind::kHtoD, 64 << 20, false, true, 0, synthetic::kCopyStream);
      } else {
        t.Copy(CopyKind::kHtoD, 64 << 20, true, false);
      }
      Kernels(t, 20, 300 * kUs);
    };
  };
  const Step with(body(false)), without(body(true));
  const int64_t gain = with.Gain(&CopyFix);
  // 64 MiB pageable at 6 GB/s (~11 ms) becomes ~3 ms pinned, hidden behind 6 ms of compute.
  EXPECT_GT(gain, 8 * kMs);
  ExpectGainMatchesTwin(with, without, gain);
  // Pinning alone saves less: the copy still runs before the compute.
  const int64_t pinned_only = with.Gain(&PinnedCopyFix);
  EXPECT_GT(pinned_only, 5 * kMs);
  EXPECT_LT(pinned_only, gain);
}

TEST(CopyFix, NearMissSmallCopiesAreNotEdited) {
  const Step s([](Timeline& t) {
    t.Copy(CopyKind::kHtoD, 64 << 10, true, false);
    Kernels(t, 5, 300 * kUs);
  });
  EXPECT_EQ(s.Gain(&CopyFix), 0);
}

// ---- launch_storm: tiny kernels fused ----
TEST(LaunchStormFix, FusedLaunchesSaveTheLaunchesAndThePerOpHostCost) {
  auto body = [](bool fixed) {
    return [=](Timeline& t) {
      if (fixed) {
        for (int i = 0; i < 1000; i += kKernelsPerFusedLaunch) {
          const int n = std::min(kKernelsPerFusedLaunch, 1000 - i);
          t.Launch(synthetic::kOptimizer, n * (3 * kUs - kKernelFixedCostNs) + kKernelFixedCostNs);
          t.HostWork(6 * kUs);
        }
        return;
      }
      for (int i = 0; i < 1000; ++i) {
        t.Launch(synthetic::kElementwise[i % 4], 3 * kUs);
        t.HostWork(6 * kUs);
      }
    };
  };
  const Step with(body(false)), without(body(true));
  const int64_t gain = with.Gain(&LaunchStormFix);
  EXPECT_GT(gain, 5 * kMs);
  ExpectGainMatchesTwin(with, without, gain);
}

TEST(LaunchStormFix, NearMissLongKernelsAreNotFused) {
  const Step s([](Timeline& t) { Kernels(t, 50, 100 * kUs); });
  EXPECT_EQ(s.Gain(&LaunchStormFix), 0);
}

// ---- alloc_churn: cached allocations ----
TEST(AllocatorFix, CachedAllocationsNoLongerSynchronize) {
  auto body = [](bool churn) {
    return [=](Timeline& t) {
      std::vector<uint64_t> blocks;
      for (int i = 0; i < 6 && churn; ++i) blocks.push_back(t.Malloc(64 << 20));
      Kernels(t, 20, 300 * kUs);
      for (uint64_t b : blocks) t.Free(b);
      Kernels(t, 10, 300 * kUs);
    };
  };
  const Step with(body(true)), without(body(false));
  const int64_t gain = with.Gain(&AllocatorFix);
  EXPECT_GT(gain, 500 * kUs);
  ExpectGainMatchesTwin(with, without, gain);
}

TEST(AllocatorFix, NearMissAStepWithoutAllocatorCallsHasNothingToEdit) {
  const Step s([](Timeline& t) { Kernels(t, 10, 100 * kUs); });
  EXPECT_EQ(s.Gain(&AllocatorFix), 0);
}

// ---- fp32_gemm: tensor cores ----
TEST(TensorCoreFix, SimtGemmsRunAtTheTensorCoreRate) {
  auto body = [](bool fixed) {
    return [=](Timeline& t) {
      for (int i = 0; i < 10; ++i) {
        t.Launch(fixed ? synthetic::kTensorCoreGemms[0] : synthetic::kSimtGemms[0],
                 static_cast<int64_t>(1 * kMs / (fixed ? kTensorCoreSpeedup : 1.0)));
        t.HostWork(15 * kUs);
      }
    };
  };
  const Step with(body(false)), without(body(true));
  const int64_t gain = with.Gain(&TensorCoreFix);
  EXPECT_GT(gain, 3 * kMs);
  ExpectGainMatchesTwin(with, without, gain);
}

TEST(TensorCoreFix, NearMissTensorCoreGemmsAreLeftAlone) {
  const Step s([](Timeline& t) { Kernels(t, 10, 1 * kMs); });
  EXPECT_EQ(s.Gain(&TensorCoreFix), 0);
}

// ---- unfused_elementwise: one memory pass per chain ----
TEST(ElementwiseFusionFix, AChainBecomesOnePass) {
  auto body = [](bool fused) {
    return [=](Timeline& t) {
      for (int layer = 0; layer < 6; ++layer) {
        t.Launch(synthetic::kTensorCoreGemms[0], 500 * kUs);
        t.HostWork(15 * kUs);
        const int passes = fused ? 1 : 4;
        for (int k = 0; k < passes; ++k) {
          t.Launch(fused ? synthetic::kTritonFusedTail : synthetic::kMlpTail[k], 150 * kUs);
          t.HostWork(15 * kUs);
        }
      }
    };
  };
  const Step with(body(false)), without(body(true));
  const int64_t gain = with.Gain(&ElementwiseFusionFix);
  EXPECT_GT(gain, 2 * kMs);
  ExpectGainMatchesTwin(with, without, gain);
}

TEST(ElementwiseFusionFix, NearMissAnAlreadyFusedKernelIsNotAChain) {
  const Step s([](Timeline& t) {
    for (int i = 0; i < 10; ++i) {
      t.Launch(synthetic::kOptimizer, 100 * kUs);
      t.HostWork(15 * kUs);
    }
  });
  EXPECT_EQ(s.Gain(&ElementwiseFusionFix), 0);
}

// ---- unfused_attention: the passes between the GEMMs go ----
TEST(AttentionFusionFix, ThePassesOverTheScoresGo) {
  const Step s([](Timeline& t) {
    for (int layer = 0; layer < 4; ++layer) {
      for (const auto& [name, ns] : {std::pair{synthetic::kBatchedGemm, 200 * kUs},
                                     std::pair{synthetic::kMaskedFill, 150 * kUs},
                                     std::pair{synthetic::kSoftmax, 250 * kUs},
                                     std::pair{synthetic::kMlpTail[2], 150 * kUs},
                                     std::pair{synthetic::kBatchedGemm, 200 * kUs}}) {
        t.Launch(name, ns);
        t.HostWork(15 * kUs);
      }
    }
  });
  // The mask, softmax and dropout (550 µs a layer) go: ~2.2 ms.
  const int64_t gain = s.Gain(&AttentionFusionFix);
  EXPECT_GT(gain, 2 * kMs);
  EXPECT_LT(gain, 2.5 * kMs);
}

TEST(AttentionFusionFix, NearMissASoftmaxWithoutGemmsAroundIt) {
  const Step s([](Timeline& t) {
    t.Launch(synthetic::kSoftmax, 250 * kUs);
    t.HostWork(15 * kUs);
  });
  EXPECT_EQ(s.Gain(&AttentionFusionFix), 0);
}

// A GPU-bound loop whose host runs one step ahead: it blocks at the step's start on the previous
// step's kernels (carried into the window). Frozen, that inherited work hides any GPU speed-up;
// replayed as a steady loop, faster kernels shorten the step.
TEST(Replay, TheSteadyModelLetsAnEditChangeWhatTheStepInherits) {
  StringTable strings;
  EventColumns ev;
  Timeline t(&strings, 3, 1, 1.0, 1.0);
  t.Begin(&ev, 1'000'000);
  std::vector<int64_t> starts;
  for (int step = 0; step < 4; ++step) {
    starts.push_back(t.host());
    t.Sync();  // waits for the previous step's kernels
    for (int i = 0; i < 10; ++i) {
      t.Launch(synthetic::kSimtGemms[0], 1 * kMs);
      t.HostWork(15 * kUs);
    }
  }
  const Interval w{starts[2], starts[3]};
  const StepGraph g = BuildStepGraph(ev, strings, w);
  EXPECT_GT(g.carried_events, 0u);
  const ReplayResult window = Replay(g, {}, 1), steady = Replay(g, {}, kSteadyCopies);
  ASSERT_TRUE(window.ok && steady.ok);
  EXPECT_EQ(window.step_ns, w.length());
  EXPECT_NEAR(static_cast<double>(steady.step_ns), static_cast<double>(w.length()), 0.02 * w.length());
  const StepWindow step{2, w.start_ns, w.end_ns, "nvtx:test"};
  const v1::StepReport report = BuildStepReport(ev, strings, step, 1);
  const IdleAttribution idle = AttributeIdle(ev, strings, w);
  KernelClasses classes;
  const std::vector<ClassifiedKernel> kernels = ClassifiedKernels(ev, strings, w, classes);
  const StepContext ctx{ev, strings, step, report.breakdown(), idle, classes, kernels};
  const std::optional<Fix> fix = TensorCoreFix(ctx, g);
  ASSERT_TRUE(fix.has_value());
  EXPECT_LT(window.step_ns - Replay(g, fix->edit, 1).step_ns, 1 * kMs);  // frozen: hidden
  // Steady: ~10 ms of SIMT GEMMs at twice the speed save ~5 ms a step.
  EXPECT_NEAR(static_cast<double>(steady.step_ns - Replay(g, fix->edit, kSteadyCopies).step_ns),
              5.0 * kMs, 0.5 * kMs);
  EXPECT_EQ(report.replay().model(), "steady");
}

TEST(StepEdit, MergedEditsReplayAsOne) {
  const Step s([](Timeline& t) {
    t.HostWork(5 * kMs);
    Kernels(t, 4, 200 * kUs);
    t.Item();
    t.HostWork(500 * kUs);
    Kernels(t, 4, 200 * kUs);
  });
  const StepGraph g = BuildStepGraph(s.events, s.strings, s.window);
  const ReplayResult base = Replay(g);
  StepEdit all = InputFix(s.Context(), g)->edit;
  all.Merge(SyncFix(s.Context(), g)->edit);
  const int64_t together = base.step_ns - Replay(g, all).step_ns;
  EXPECT_GE(together, s.Gain(&InputFix));
  EXPECT_GE(together, s.Gain(&SyncFix));
}

}  // namespace
}  // namespace gpuspy::analysis::replay
