// gpuspy diff's explanation on pairs of synthetic runs whose one difference is known: the cause
// is named first, with the ms the construction put there (within 5%), and the contributions add
// up exactly to the change of the mean step time. Plus the parts of a diff that need no run.
#include "analysis/diff/run_diff.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/diff/run_profile.h"
#include "analysis/job_analysis.h"
#include "analysis/kernel_classifier.h"
#include "analysis/process_analysis.h"
#include "tools/replay/kernel_names.h"
#include "tools/replay/timeline.h"

namespace gpuspy::analysis {
namespace {

using synthetic::kMs;
using synthetic::kUs;
using synthetic::Timeline;

constexpr int kSteps = 12;
constexpr int kKernelsPerStep = 60;
constexpr int64_t kStartNs = 1'700'000'000'000'000'000;
constexpr char kItemSite[] = "train.py:57 train_step";

struct TraceRun {
  StringTable strings;
  EventColumns events;
  std::vector<StepAnalysis> steps;
};

// `body` runs the step's work on the host timeline (and may annotate the events it made, e.g.
// with call sites); every step ends with loss.item(), as the synthetic workloads' do, and is an
// NVTX ProfilerStep range.
std::unique_ptr<TraceRun> MakeRun(const std::function<void(Timeline&, EventColumns&)>& body,
                                  uint64_t seed) {
  auto r = std::make_unique<TraceRun>();
  Timeline t(&r->strings, seed, 4242, 1.0, 1.0);
  t.Begin(&r->events, kStartNs);
  for (int s = 0; s < kSteps; ++s) {
    const int64_t start = t.host();
    body(t, r->events);
    t.Item();
    t.Range(absl::StrCat("ProfilerStep#", s), start, t.host(), 0);
  }
  std::map<uint64_t, std::vector<StepAnalysis>> job;
  job[1] = AnalyzeProcessSteps(CutIntoImportBatches(r->events), r->strings, 1);
  AnalyzeJobSteps("j", {{1, 0, 1, 0, "host", r->events.size()}}, &job);
  r->steps = std::move(job[1]);
  return r;
}
std::unique_ptr<TraceRun> MakeRun(const std::function<void(Timeline&)>& body, uint64_t seed) {
  return MakeRun([&](Timeline& t, EventColumns&) { body(t); }, seed);
}

v1::RunProfile Profile(const TraceRun& r, const std::string& label) {
  std::vector<SelectedStep> steps;
  for (const StepAnalysis& s : r.steps) steps.push_back({&s, &r.events, &r.strings, 0});
  return ProfileSelection(label, steps);
}

// A GPU-bound forward/backward: GEMMs and elementwise kernels, the host well ahead.
void Model(Timeline& t, const char* const* gemms, int64_t gemm_ns, int slow_kernel = -1) {
  for (int i = 0; i < kKernelsPerStep; ++i) {
    const bool gemm = i % 3 == 0;
    int64_t ns = gemm ? gemm_ns : 250 * kUs;
    if (!gemm && i % 4 == slow_kernel) ns *= 2;
    t.Launch(gemm ? gemms[i % 3] : synthetic::kElementwise[i % 4], ns);
    t.HostWork(15 * kUs);
  }
}

int64_t Sum(const v1::RunDiff& d) {
  int64_t total = 0;
  for (const v1::Contribution& c : d.contributions()) total += c.delta_ns();
  return total;
}

void ExpectWithin(int64_t got, int64_t want, double share) {
  EXPECT_LE(std::abs(static_cast<double>(got - want)), share * std::abs(static_cast<double>(want)))
      << "got " << got << " ns, want " << want << " ns";
}

TEST(RunDiffTest, OneKernelTwiceAsSlowIsNamedFirstWithItsMilliseconds) {
  auto a = MakeRun([](Timeline& t) { Model(t, synthetic::kTensorCoreGemms, 900 * kUs); }, 1);
  auto b = MakeRun([](Timeline& t) { Model(t, synthetic::kTensorCoreGemms, 900 * kUs, 2); }, 1);
  const v1::RunDiff d = DiffRuns(Profile(*a, "a"), Profile(*b, "b"));
  ASSERT_GE(d.contributions_size(), 2);
  const v1::Contribution& first = d.contributions(0);
  EXPECT_EQ(first.kind(), "kernel_slower");
  EXPECT_EQ(first.subject(), ShortKernelName(synthetic::kElementwise[2]));
  // Kernels i % 3 != 0 with i % 4 == 2: i = 2, 10, 14, 22, ... 10 of the 60, 250 us more each.
  int slowed = 0;
  for (int i = 0; i < kKernelsPerStep; ++i) slowed += i % 3 != 0 && i % 4 == 2;
  ExpectWithin(first.delta_ns(), slowed * 250 * kUs, 0.05);
  ExpectWithin(first.delta_ns(), d.mean_delta_ns(), 0.05);  // GPU-bound: the step pays it all
  EXPECT_EQ(Sum(d), d.mean_delta_ns());
  EXPECT_FALSE(d.within_noise());
  EXPECT_GT(d.median_delta_ns(), 0);
}

TEST(RunDiffTest, AnAddedItemIsItsCallSiteWithTheStallItCosts) {
  // 100 us of Python before each 200 us kernel: the host stays ahead, until a sync makes the
  // GPU wait for the Python before the next launch.
  auto a = MakeRun(
      [](Timeline& t) {
        for (int i = 0; i < kKernelsPerStep; ++i) {
          t.HostWork(100 * kUs);
          t.Launch(synthetic::kTensorCoreGemms[0], 200 * kUs);
        }
      },
      3);
  // The same with the .item() calls, their API records carrying the Python line.
  auto b = MakeRun(
      [](Timeline& t, EventColumns& events) {
        const StringRef site = t.strings()->Intern(kItemSite);
        for (int i = 0; i < kKernelsPerStep; ++i) {
          t.HostWork(100 * kUs);
          t.Launch(synthetic::kTensorCoreGemms[0], 200 * kUs);
          if (i % 3 == 2) {
            t.Item();  // metrics.append(acc.item()) in the layer loop: a D2H copy and a sync
            // The copy's and the sync's API records: the last two.
            events.apis[events.apis.size() - 1].call_site = site;
            events.apis[events.apis.size() - 2].call_site = site;
          }
        }
      },
      3);
  const v1::RunDiff d = DiffRuns(Profile(*a, "a"), Profile(*b, "b"));
  ASSERT_GE(d.contributions_size(), 2);
  const v1::Contribution& first = d.contributions(0);
  EXPECT_EQ(first.kind(), "blocking_calls");
  EXPECT_EQ(first.subject(), kItemSite);
  EXPECT_NE(first.detail().find("0 → 40 calls/step"), std::string::npos) << first.detail();
  // Each of the 20 syncs drains the queue, then the GPU waits for the 100 us of Python before the
  // next launch: 2 ms a step. The launch calls themselves (6 us each) are launch-bound idle by
  // the one idle rule (idle_attribution.h), listed apart.
  ExpectWithin(first.delta_ns(), 20 * 100 * kUs, 0.05);
  EXPECT_GE(first.delta_ns(), 0.9 * d.mean_delta_ns());
  EXPECT_EQ(Sum(d), d.mean_delta_ns());
}

TEST(RunDiffTest, AddedHostWorkIsNamedByTheLineTheSamplerCaughtInTheGaps) {
  // A GPU-bound model; B adds 4 ms of Python after the step's .item() (a metrics helper), which
  // the GPU waits for: host work, caught by the host sampler at one line every 0.5 ms.
  constexpr char kHotLine[] = "train.py:88 log_metrics";
  auto model = [](Timeline& t) { Model(t, synthetic::kTensorCoreGemms, 300 * kUs); };
  auto a = MakeRun(model, 5);
  auto b = MakeRun(
      [&](Timeline& t) {
        t.Item();
        const int64_t from = t.host();
        t.HostWork(4 * kMs);
        for (int64_t at = from + 250 * kUs; at < t.host(); at += 500 * kUs) t.Sample(at, kHotLine);
        model(t);
      },
      5);
  const v1::RunDiff d = DiffRuns(Profile(*a, "a"), Profile(*b, "b"));
  ASSERT_GE(d.contributions_size(), 1);
  const v1::Contribution& first = d.contributions(0);
  EXPECT_EQ(first.kind(), "host");
  EXPECT_EQ(first.subject(), kHotLine);
  EXPECT_NE(first.detail().find(std::string("at ") + kHotLine + " 0.00 ms → "), std::string::npos) << first.detail();
  ExpectWithin(first.delta_ns(), 4 * kMs, 0.1);
  EXPECT_EQ(Sum(d), d.mean_delta_ns());

  // Near miss: without samples (nor call sites on the launches), the part is still host work,
  // with no place it cannot know.
  auto unsampled = MakeRun(
      [&](Timeline& t) {
        t.Item();
        t.HostWork(4 * kMs);
        model(t);
      },
      5);
  const v1::RunDiff plain = DiffRuns(Profile(*a, "a"), Profile(*unsampled, "b"));
  ASSERT_GE(plain.contributions_size(), 1);
  EXPECT_EQ(plain.contributions(0).kind(), "host");
  EXPECT_EQ(plain.contributions(0).subject(), "host work");
}

TEST(RunDiffTest, Bf16GemmsTurnedFp32AreOneTensorCoreChange) {
  auto a = MakeRun([](Timeline& t) { Model(t, synthetic::kTensorCoreGemms, 900 * kUs); }, 5);
  auto b = MakeRun([](Timeline& t) { Model(t, synthetic::kSimtGemms, 2250 * kUs); }, 5);
  const v1::RunDiff d = DiffRuns(Profile(*a, "bf16"), Profile(*b, "fp32"));
  const v1::Contribution& first = d.contributions(0);
  EXPECT_EQ(first.kind(), "tensor_cores_lost");
  // 20 GEMMs a step, 1.35 ms longer each.
  ExpectWithin(first.delta_ns(), 20 * 1350 * kUs, 0.05);
  ExpectWithin(first.delta_ns(), d.mean_delta_ns(), 0.05);
  EXPECT_EQ(Sum(d), d.mean_delta_ns());
  // Not also a kernel removed and another added.
  for (const v1::Contribution& c : d.contributions()) {
    EXPECT_NE(c.kind(), "kernel_new");
    EXPECT_NE(c.kind(), "kernel_removed");
  }
  // And the other way round.
  const v1::RunDiff back = DiffRuns(Profile(*b, "fp32"), Profile(*a, "bf16"));
  EXPECT_EQ(back.contributions(0).kind(), "tensor_cores_gained");
  EXPECT_LT(back.contributions(0).delta_ns(), 0);
}

// Backward (400 kernels of 20 us) with its gradients all-reduced in `buckets` collectives on
// NCCL's stream, each after the backward kernels it reduces; the optimizer waits for them.
void Backward(Timeline& t, int buckets, int64_t collective_ns, uint64_t bytes) {
  constexpr int kBackward = 400;
  CollectiveEvent args;
  args.op = t.strings()->Intern("allreduce");
  args.in_bytes = args.out_bytes = bytes;
  args.group_size = 1;
  for (int i = 0; i < kBackward; ++i) {
    t.Launch(synthetic::kElementwise[i % 4], 20 * kUs);
    t.HostWork(5 * kUs);
    if ((i + 1) % (kBackward / buckets) == 0) {
      const synthetic::PendingCollective p =
          t.LaunchCollective(synthetic::kNcclAllReduceSimple, synthetic::kNcclStream, &args);
      t.EndCollective(p, p.arrival_ns + collective_ns);
    }
  }
  t.WaitStream(synthetic::kComputeStream, synthetic::kNcclStream);
  t.Launch(synthetic::kOptimizer, 200 * kUs);
}

TEST(RunDiffTest, ATinyDdpBucketIsTheCollectivesWithTheirExposedTime) {
  // 4 buckets of 25 MiB (2 ms each) vs one all-reduce per gradient (400 x 64 KiB, 40 us each:
  // NCCL's latency, not bandwidth, sets their pace and they outrun the backward they overlap).
  auto a = MakeRun([](Timeline& t) { Backward(t, 4, 2 * kMs, 25ull << 20); }, 7);
  auto b = MakeRun([](Timeline& t) { Backward(t, 400, 40 * kUs, 64ull << 10); }, 7);
  const v1::RunDiff d = DiffRuns(Profile(*a, "bucket 25 MiB"), Profile(*b, "bucket 64 KiB"));
  const v1::Contribution& first = d.contributions(0);
  EXPECT_EQ(first.kind(), "collectives");
  EXPECT_EQ(first.subject(), "allreduce");
  EXPECT_NE(first.detail().find("4 → 400 calls/step"), std::string::npos) << first.detail();
  EXPECT_NE(first.detail().find("25.0 MiB → 64.0 KiB"), std::string::npos) << first.detail();
  ExpectWithin(first.delta_ns(), d.mean_delta_ns(), 0.05);
  EXPECT_GT(d.mean_delta_ns(), 0);
  EXPECT_EQ(Sum(d), d.mean_delta_ns());
}

TEST(RunDiffTest, TheSameRunTwiceIsWithinNoiseAndExplainsNothing) {
  auto body = [](Timeline& t) { Model(t, synthetic::kTensorCoreGemms, 900 * kUs); };
  auto a = MakeRun(body, 11);
  auto b = MakeRun(body, 12);  // other jitter, same work
  const v1::RunDiff d = DiffRuns(Profile(*a, "a"), Profile(*b, "b"));
  EXPECT_TRUE(d.within_noise()) << d.median_delta_ns() << " vs noise " << d.a().noise_ns();
  ASSERT_EQ(d.contributions_size(), 1);
  EXPECT_EQ(d.contributions(0).kind(), "other");
  EXPECT_EQ(d.contributions(0).delta_ns(), d.mean_delta_ns());
}

TEST(RunDiffTest, PartsAddUpToTheMeanStepOnEachSide) {
  auto a = MakeRun([](Timeline& t) { Model(t, synthetic::kTensorCoreGemms, 900 * kUs); }, 1);
  const v1::RunProfile p = Profile(*a, "a");
  const v1::WallParts& w = p.parts();
  const int64_t sum = w.compute_ns() + w.exposed_comm_ns() + w.idle_sync_ns() +
                      w.idle_launch_ns() + w.idle_input_ns() + w.idle_host_ns() +
                      w.idle_cuda_call_ns();
  EXPECT_LE(std::llabs(sum - w.wall_ns()), 7);  // each mean rounded on its own
  EXPECT_EQ(p.steps(), static_cast<uint32_t>(kSteps));
  EXPECT_FALSE(p.warmup_included());
}

TEST(RunDiffTest, ASelectionWithoutASteadyStepComparesEveryStepAndSaysSo) {
  auto a = MakeRun([](Timeline& t) { Model(t, synthetic::kTensorCoreGemms, 900 * kUs); }, 1);
  const v1::RunProfile steady = Profile(*a, "a");
  EXPECT_FALSE(steady.warmup_included());
  for (StepAnalysis& s : a->steps) s.report.set_steady_state(false);
  const v1::RunProfile all = Profile(*a, "a");
  EXPECT_TRUE(all.warmup_included());
  EXPECT_EQ(all.steps(), static_cast<uint32_t>(kSteps));
  const v1::RunDiff d = DiffRuns(all, steady);
  ASSERT_FALSE(d.notes().empty());
  EXPECT_NE(d.notes(0).find("has no steady step"), std::string::npos) << d.notes(0);
  // One steady step among warm-up ones: only it is compared.
  a->steps[3].report.set_steady_state(true);
  const v1::RunProfile one = Profile(*a, "a");
  EXPECT_FALSE(one.warmup_included());
  EXPECT_EQ(one.steps(), 1u);
  EXPECT_EQ(one.steps_seen(), static_cast<uint32_t>(kSteps));
}

v1::RunProfile Steps(std::initializer_list<int64_t> walls) {
  v1::RunProfile p;
  int64_t sum = 0;
  for (int64_t w : walls) {
    p.add_step_wall_ns(w);
    sum += w;
  }
  p.mutable_parts()->set_wall_ns(sum / static_cast<int64_t>(walls.size()));
  p.mutable_parts()->set_compute_ns(p.parts().wall_ns());
  return p;
}

TEST(RunDiffTest, NoiseComesFromTheStepToStepSpread) {
  // Medians 100 and 104 ms; spreads of +-10 ms: a 4 ms change is within noise.
  const v1::RunDiff noisy = DiffRuns(Steps({90, 100, 110, 95, 105}), Steps({94, 104, 114, 99, 109}));
  EXPECT_EQ(noisy.median_delta_ns(), 4);
  EXPECT_TRUE(noisy.within_noise());
  // The same change with no spread is beyond it.
  const v1::RunDiff clean = DiffRuns(Steps({100, 100, 100}), Steps({104, 104, 104}));
  EXPECT_FALSE(clean.within_noise());
  // Two steps a side: no estimate, said in a note.
  const v1::RunDiff few = DiffRuns(Steps({100, 100}), Steps({104, 104}));
  EXPECT_FALSE(few.within_noise());
  EXPECT_EQ(few.a().noise_ns(), 0);
  ASSERT_FALSE(few.notes().empty());
  EXPECT_NE(few.notes(0).find("noise"), std::string::npos);
}

TEST(RunDiffTest, SmallChangesStayInOtherAndTheListIsCapped) {
  v1::RunProfile a = Steps({100'000'000, 100'000'000, 100'000'000});
  v1::RunProfile b = Steps({110'000'000, 110'000'000, 110'000'000});
  // 12 kernels each 0.75 ms slower, one 10 us slower (under kMinContributionNs).
  for (int i = 0; i < 13; ++i) {
    v1::KernelProfile* ka = a.add_kernels();
    ka->set_name(absl::StrCat("kernel_", i));
    ka->set_calls_per_step(1);
    ka->set_ns_per_step(1'000'000);
    ka->set_mean_ns(1'000'000);
    v1::KernelProfile* kb = b.add_kernels();
    *kb = *ka;
    kb->set_ns_per_step(i == 12 ? 1'010'000 : 1'750'000);
    kb->set_mean_ns(kb->ns_per_step());
  }
  const v1::RunDiff d = DiffRuns(a, b);
  EXPECT_EQ(d.contributions_size(), kMaxContributions + 1);
  EXPECT_EQ(d.contributions().rbegin()->kind(), "other");
  // The 4 slowed kernels past the cap and the 10 us one are in "other".
  EXPECT_EQ(d.contributions().rbegin()->delta_ns(), 10'000'000 - 8 * 750'000);
  EXPECT_EQ(d.contributions(0).kind(), "kernel_slower");
}

TEST(RunDiffTest, TimeWindowsAgainstStepsAreRefusedNotCompared) {
  // A: 1 s time windows (no step found); B: real steps of ~220 ms. Their "per step" differ in
  // kind, so "B is faster by 777.6 ms per step, beyond the noise" would be meaningless.
  v1::RunProfile windows = Steps({1'000'000'000, 1'000'000'000, 1'000'000'000});
  windows.set_label("idle_run");
  windows.set_steps(3);
  windows.set_windows(3);
  v1::RunProfile steps = Steps({222'400'000, 222'400'000, 222'400'000});
  steps.set_label("train_run");
  steps.set_steps(3);
  const absl::Status st = CheckComparable(windows, steps);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("A (idle_run) has no steps, only 3 time windows"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("B (train_run) has 3 steps"), std::string::npos) << st.message();
  EXPECT_EQ(CheckComparable(steps, windows).code(), absl::StatusCode::kFailedPrecondition);
  // Same kinds on both sides: comparable.
  EXPECT_TRUE(CheckComparable(steps, steps).ok());
  EXPECT_TRUE(CheckComparable(windows, windows).ok());
}

}  // namespace
}  // namespace gpuspy::analysis
