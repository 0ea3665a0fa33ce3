// memory_growth (analysis/detectors/memory_growth.h): the rule on level series (fires,
// and each threshold's near miss), the finding on reports (leak vs fragmentation, onset, sites),
// and end to end on the synthetic leak fixture and its steady controls.
#include "analysis/detectors/memory_growth.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/step_segmenter.h"
#include "analysis/step_series.h"
#include "importers/kineto/kineto_reader.h"
#include "nlohmann/json.hpp"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy::analysis {
namespace {

constexpr int64_t kMiB = 1ll << 20;
constexpr int64_t kBase = 2048 * kMiB;

// Levels at the end of each step, starting from kBase, growing by `deltas_mib`.
std::vector<int64_t> Levels(std::initializer_list<int64_t> deltas_mib) {
  std::vector<int64_t> out;
  int64_t level = kBase;
  for (int64_t d : deltas_mib) out.push_back(level += d * kMiB);
  return out;
}

TEST(FindGrowthRun, FiresOnSteadyGrowthUpToTheLastStep) {
  const auto run = FindGrowthRun(kBase, Levels({0, 0, 64, 64, 64, 64}));
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->onset, 2u);  // the first growing step
  EXPECT_EQ(run->growing_steps, 4u);
  EXPECT_EQ(run->growth_bytes, 256 * kMiB);
  // The longest stretch meeting the share: one flat step before the growth is still in it.
  EXPECT_EQ(run->first, 1u);
  EXPECT_EQ(run->steps, 5u);
}

TEST(FindGrowthRun, ToleratesAFlatStepInsideTheStretch) {
  const auto run = FindGrowthRun(kBase, Levels({20, 20, 0, 20, 20, 20, 20, 20}));
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->onset, 0u);
  EXPECT_EQ(run->growing_steps, 7u);
}

TEST(FindGrowthRun, NearMissTooFewGrowingSteps) {
  // Three growing steps (kMinGrowingSteps is 4), however large.
  EXPECT_FALSE(FindGrowthRun(kBase, Levels({0, 0, 0, 0, 500, 500, 500})).has_value());
  EXPECT_TRUE(FindGrowthRun(kBase, Levels({0, 0, 0, 500, 500, 500, 500})).has_value());
}

TEST(FindGrowthRun, NearMissTooLittleMemory) {
  // 4 x 15 MiB = 60 MiB < kMinGrowthBytes (64 MiB); 4 x 16 MiB reaches it.
  EXPECT_FALSE(FindGrowthRun(kBase, Levels({0, 15, 15, 15, 15})).has_value());
  EXPECT_TRUE(FindGrowthRun(kBase, Levels({0, 16, 16, 16, 16})).has_value());
}

TEST(FindGrowthRun, NearMissGrowthBelowTheNoiseFloorPerStep) {
  // 0.9 MiB per step over 100 steps is 90 MiB, but no single step moves kMinStepGrowthBytes.
  std::vector<int64_t> levels;
  for (int i = 1; i <= 100; ++i) levels.push_back(kBase + i * (kMiB * 9 / 10));
  EXPECT_FALSE(FindGrowthRun(kBase, levels).has_value());
}

TEST(FindGrowthRun, NearMissGrowthThatStoppedIsNotALeak) {
  // The allocator growing over the first steady steps, then holding: no growth at the end.
  EXPECT_FALSE(FindGrowthRun(kBase, Levels({256, 256, 256, 256, 0, 0, 0, 0})).has_value());
  // Every trailing stretch with 4 growing steps has 6 or more steps (4/6 < 75 %).
  EXPECT_FALSE(FindGrowthRun(kBase, Levels({0, 0, 0, 0, 64, 0, 64, 0, 64, 64})).has_value());
}

TEST(FindGrowthRun, AShrinkingStepEndsTheStretch) {
  // Memory given back (empty_cache, a freed cache) at step 3: only what follows counts.
  EXPECT_FALSE(FindGrowthRun(kBase, Levels({64, 64, 64, -512, 64, 64, 64})).has_value());
  const auto run = FindGrowthRun(kBase, Levels({64, 64, 64, -512, 64, 64, 64, 64}));
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->first, 4u);
}

TEST(FindGrowthRun, TooShortASeriesNeverFires) {
  EXPECT_FALSE(FindGrowthRun(kBase, {}).has_value());
  EXPECT_FALSE(FindGrowthRun(kBase, Levels({512, 512, 512})).has_value());
}

// Steady steps with memory figures as MemoryLevels would give them.
std::vector<v1::StepReport> Reports(std::initializer_list<int64_t> reserved_deltas_mib,
                                    std::initializer_list<int64_t> allocated_deltas_mib = {}) {
  std::vector<v1::StepReport> out;
  int64_t reserved = kBase, allocated = kBase / 2;
  auto a = allocated_deltas_mib.begin();
  int n = 0;
  for (int64_t d : reserved_deltas_mib) {
    v1::StepReport r;
    r.mutable_step()->set_number(10 + n++);
    r.set_steady_state(true);
    v1::StepMemory* m = r.mutable_memory();
    m->set_source(allocated_deltas_mib.size() ? "allocator" : "segments");
    m->set_reserved_start_bytes(reserved);
    reserved += d * kMiB;
    m->set_reserved_end_bytes(reserved);
    m->set_reserved_peak_bytes(reserved + 100 * kMiB);
    m->set_reserved_growth_bytes(d * kMiB);
    if (a != allocated_deltas_mib.end()) {
      m->set_has_allocated(true);
      allocated += *a * kMiB;
      m->set_allocated_end_bytes(allocated);
      m->set_allocated_growth_bytes(*a++ * kMiB);
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<v1::StepReport*> Pointers(std::vector<v1::StepReport>& reports) {
  std::vector<v1::StepReport*> out;
  for (auto& r : reports) out.push_back(&r);
  return out;
}

const v1::Finding* GrowthFinding(const v1::StepReport& r) {
  for (const auto& f : r.findings()) {
    if (f.detector() == v1::memory_growth) return &f;
  }
  return nullptr;
}

std::string Evidence(const v1::Finding& f, const std::string& key) {
  for (const auto& e : f.evidence()) {
    if (e.key() == key) return e.value();
  }
  return "";
}

TEST(DetectMemoryGrowth, SegmentsGrowingFromTheOnsetWithTheirCallSites) {
  auto reports = Reports({0, 0, 64, 64, 64, 64, 64});
  for (size_t i = 2; i < reports.size(); ++i) {
    auto* s = reports[i].mutable_memory()->add_sites();
    s->set_call_site("train.py:87 history.append(outputs)");
    s->set_bytes(64 * kMiB);
    s->set_count(1);
  }
  reports[0].set_steady_state(false);  // a warm-up step is not part of the series
  DetectMemoryGrowth(Pointers(reports));
  EXPECT_EQ(GrowthFinding(reports[0]), nullptr);
  EXPECT_EQ(GrowthFinding(reports[1]), nullptr);  // flat, before the onset
  for (size_t i = 2; i < reports.size(); ++i) {
    const v1::Finding* f = GrowthFinding(reports[i]);
    ASSERT_NE(f, nullptr) << "step " << i;
    EXPECT_EQ(Evidence(*f, "since_step"), "12");
    EXPECT_EQ(Evidence(*f, "growing_steps"), "5 of 6");  // the flat step 11 opens the stretch
    EXPECT_EQ(Evidence(*f, "growth_reserved"), "+320.0 MiB");
    EXPECT_EQ(Evidence(*f, "allocated_at"),
              "train.py:87 history.append(outputs) 320.0 MiB in 5 allocations");
    EXPECT_EQ(f->lost_ns(), 0);
    EXPECT_NE(f->title().find("since step 12"), std::string::npos) << f->title();
  }
}

TEST(DetectMemoryGrowth, LiveTensorsGrowingIsALeakEvenWhileTheCacheAbsorbsIt) {
  auto reports = Reports({0, 0, 0, 0, 0, 0}, {40, 40, 40, 40, 40, 40});
  DetectMemoryGrowth(Pointers(reports));
  const v1::Finding* f = GrowthFinding(reports.back());
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title().find("(allocated)"), std::string::npos) << f->title();
  EXPECT_NE(f->fix_hint().find("live tensors accumulate"), std::string::npos);
}

TEST(DetectMemoryGrowth, ReservedGrowingAloneIsFragmentation) {
  auto reports = Reports({30, 30, 30, 30, 30}, {0, 0, 0, 0, 0});
  DetectMemoryGrowth(Pointers(reports));
  const v1::Finding* f = GrowthFinding(reports.back());
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title().find("(reserved)"), std::string::npos) << f->title();
  EXPECT_NE(f->fix_hint().find("fragments"), std::string::npos);
}

TEST(DetectMemoryGrowth, SteadyMemoryOrNoneIsNotAccused) {
  auto flat = Reports({0, 2, -2, 0, 1, -1, 0, 0}, {5, -5, 5, -5, 5, -5, 0, 0});
  DetectMemoryGrowth(Pointers(flat));
  for (const auto& r : flat) EXPECT_EQ(GrowthFinding(r), nullptr);
  std::vector<v1::StepReport> none(6);
  for (auto& r : none) r.set_steady_state(true);
  DetectMemoryGrowth(Pointers(none));
  for (const auto& r : none) EXPECT_TRUE(r.findings().empty());
}

// End to end on synthetic processes, analysed as the collector does.
std::vector<StepAnalysis> AnalyzeEvents(const EventColumns& all, const StringTable& strings) {
  std::vector<StepAnalysis> out;
  for (const StepWindow& w : StepSegmenter().FindSteps(all, strings)) {
    out.push_back(AnalyzeStep(all, strings, w, 1));
  }
  AnalyzeStepSeries(&out);
  return out;
}

std::vector<StepAnalysis> AnalyzeScenario(synthetic::Scenario scenario) {
  synthetic::SyntheticOptions o;
  o.scenario = scenario;
  o.steps = 8;
  o.seed = 5;
  const synthetic::SyntheticRank rank = synthetic::GenerateRank(o, 0);
  EventColumns all;
  for (const auto& s : rank.steps) all.Append(s);
  return AnalyzeEvents(all, rank.strings);
}

TEST(MemoryGrowthScenario, LeakFixtureIsCalledMemoryGrowthFromItsFirstSteadyStep) {
  const auto steps = AnalyzeScenario(synthetic::Scenario::kMemoryLeak);
  ASSERT_EQ(steps.size(), 8u);
  for (size_t i = 2; i < steps.size(); ++i) {
    const v1::StepReport& r = steps[i].report;
    EXPECT_EQ(r.primary_bottleneck(), v1::memory_growth) << "step " << i;
    ASSERT_TRUE(r.has_memory());
    EXPECT_EQ(r.memory().source(), "segments");
    EXPECT_EQ(r.memory().reserved_growth_bytes(), 64 * kMiB);
    // The 1 GiB of weights from step 0 is carried into every later step's level.
    EXPECT_GE(r.memory().reserved_start_bytes(), 1024 * kMiB);
    const v1::Finding* f = GrowthFinding(r);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(Evidence(*f, "since_step"), "2");
    EXPECT_NE(Evidence(*f, "allocated_at").find("train.py:87"), std::string::npos);
    // Still GPU-bound underneath: the growth outranks it, it does not hide it.
    bool gpu_bound = false;
    for (const auto& g : r.findings()) gpu_bound |= g.detector() == v1::gpu_bound;
    EXPECT_TRUE(gpu_bound) << "step " << i;
  }
}

TEST(MemoryGrowthScenario, SteadyControlsHaveNoMemoryGrowth) {
  // healthy: weights allocated once; alloc_churn: 768 MiB allocated and freed every step.
  for (synthetic::Scenario s : {synthetic::Scenario::kHealthy, synthetic::Scenario::kAllocChurn}) {
    const auto steps = AnalyzeScenario(s);
    for (size_t i = 0; i < steps.size(); ++i) {
      EXPECT_EQ(GrowthFinding(steps[i].report), nullptr) << synthetic::ScenarioName(s) << " " << i;
      EXPECT_TRUE(steps[i].report.has_memory());
    }
    EXPECT_EQ(steps.back().report.memory().reserved_growth_bytes(), 0);
  }
}

// A PyTorch profiler trace recorded with profile_memory=True: `steps` ProfilerSteps of 10 ms, each
// allocating 512 MiB of activations that are freed before it ends, and keeping `kept_bytes` more
// (0: a steady control). The caching allocator reserves in 20 MiB-rounded segments and never
// gives back, as it does without empty_cache().
std::string ProfileMemoryTrace(int steps, int64_t kept_bytes) {
  constexpr int64_t kStepUs = 10'000;
  constexpr int64_t kRound = 20 * kMiB;
  int64_t allocated = 1024 * kMiB, reserved = 1040 * kMiB;
  nlohmann::json events = nlohmann::json::array();
  auto memory = [&](int64_t ts_us, int64_t bytes) {
    allocated += bytes;
    reserved = std::max(reserved, (allocated + kRound - 1) / kRound * kRound);
    events.push_back({{"ph", "i"}, {"cat", "cpu_instant_event"}, {"s", "t"}, {"name", "[memory]"},
                      {"pid", 7}, {"tid", 7}, {"ts", ts_us},
                      {"args", {{"Device Type", 1}, {"Device Id", 0}, {"Addr", 4096}, {"Bytes", bytes},
                                {"Total Allocated", allocated}, {"Total Reserved", reserved}}}});
  };
  for (int s = 0; s < steps; ++s) {
    const int64_t t0 = 1'000 + s * kStepUs;
    events.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"pid", 7}, {"tid", 7},
                      {"name", "ProfilerStep#" + std::to_string(s)}, {"ts", t0}, {"dur", kStepUs}});
    events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 7},
                      {"tid", 7}, {"ts", t0 + 10}, {"dur", 5}, {"args", {{"correlation", s + 1}}}});
    memory(t0 + 100, 512 * kMiB);
    if (kept_bytes > 0) memory(t0 + 200, kept_bytes);
    memory(t0 + 9'000, -512 * kMiB);
  }
  return nlohmann::json{{"traceEvents", events}}.dump();
}

TEST(MemoryGrowthKineto, AllocatorTotalsOfALeakingTraceAreCalledALeak) {
  auto trace = importers::ParseKinetoTrace(ProfileMemoryTrace(8, 100 * kMiB));
  ASSERT_TRUE(trace.ok()) << trace.status();
  const auto steps = AnalyzeEvents(trace->events, trace->strings);
  ASSERT_EQ(steps.size(), 8u);
  const v1::StepReport& last = steps.back().report;
  ASSERT_TRUE(last.has_memory());
  EXPECT_EQ(last.memory().source(), "allocator");
  EXPECT_EQ(last.memory().allocated_growth_bytes(), 100 * kMiB);
  EXPECT_EQ(last.memory().allocated_peak_bytes(), last.memory().allocated_end_bytes() + 512 * kMiB);
  EXPECT_EQ(last.primary_bottleneck(), v1::memory_growth);
  const v1::Finding* f = GrowthFinding(last);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title().find("(allocated)"), std::string::npos) << f->title();
  EXPECT_NE(f->fix_hint().find("live tensors accumulate"), std::string::npos);
}

TEST(MemoryGrowthKineto, ActivationsFreedEveryStepAreNotGrowth) {
  auto trace = importers::ParseKinetoTrace(ProfileMemoryTrace(8, 0));
  ASSERT_TRUE(trace.ok()) << trace.status();
  const auto steps = AnalyzeEvents(trace->events, trace->strings);
  ASSERT_EQ(steps.size(), 8u);
  for (const StepAnalysis& s : steps) {
    ASSERT_TRUE(s.report.has_memory());
    EXPECT_EQ(GrowthFinding(s.report), nullptr) << "step " << s.report.step().number();
  }
  // The peak inside each step is the activations on top of what stays.
  const v1::StepMemory& m = steps.back().report.memory();
  EXPECT_EQ(m.allocated_peak_bytes() - m.allocated_end_bytes(), 512 * kMiB);
  EXPECT_EQ(m.reserved_growth_bytes(), 0);
}

}  // namespace
}  // namespace gpuspy::analysis
