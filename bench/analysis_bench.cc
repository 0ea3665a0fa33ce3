// Analysis cost: per-step report (breakdown + every detector) per 1k events, on synthetic steps of
// each pathology; and encode/decode cost and size of the wire form. Google Benchmark.
#include <benchmark/benchmark.h>

#include "codec/batch_decoder.h"
#include "codec/batch_encoder.h"
#include "analysis/period_detector.h"
#include "analysis/step_report.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy {
namespace {

struct Fixture {
  synthetic::SyntheticRank rank;
  EventColumns all;
  std::vector<analysis::StepWindow> steps;
};

const Fixture& Get(synthetic::Scenario scenario, int steps, bool nvtx = true) {
  static std::map<std::tuple<int, int, bool>, Fixture>* cache = new std::map<std::tuple<int, int, bool>, Fixture>();
  auto key = std::make_tuple(static_cast<int>(scenario), steps, nvtx);
  auto it = cache->find(key);
  if (it != cache->end()) return it->second;
  Fixture f;
  synthetic::SyntheticOptions o;
  o.scenario = scenario;
  o.steps = steps;
  o.nvtx_steps = nvtx;
  f.rank = synthetic::GenerateRank(o, 0);
  for (const auto& s : f.rank.steps) f.all.Append(s);
  f.steps = analysis::StepSegmenter().FindSteps(f.all, f.rank.strings);
  return cache->emplace(key, std::move(f)).first->second;
}

// One steady step's report, with only that step's events as input (what the collector reads).
void BM_StepReport(benchmark::State& state) {
  const auto scenario = static_cast<synthetic::Scenario>(state.range(0));
  const Fixture& f = Get(scenario, 4);
  const EventColumns& step_events = f.rank.steps[3];
  const analysis::StepWindow& w = f.steps[3];
  for (auto _ : state) {
    v1::StepReport r = analysis::BuildStepReport(step_events, f.rank.strings, w, 1);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * step_events.size());
  state.counters["events_per_step"] = static_cast<double>(step_events.size());
  state.counters["time_per_1k_events"] = benchmark::Counter(
      static_cast<double>(step_events.size()) / 1000.0,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.SetLabel(synthetic::ScenarioName(scenario));
}
BENCHMARK(BM_StepReport)->DenseRange(0, 6)->Unit(benchmark::kMicrosecond);

// How the report's cost grows with the events in a step: a window spanning K launch-storm steps
// is analysed as one step (K = 1 .. 256: ~7k .. ~2M events).
void BM_StepReportScaling(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const Fixture& f = Get(synthetic::Scenario::kLaunchStorm, std::max(k, 4));
  EventColumns events;
  for (int i = 0; i < k; ++i) events.Append(f.rank.steps[i]);
  analysis::StepWindow w = f.steps[0];
  w.end_ns = f.steps[k - 1].end_ns;
  for (auto _ : state) {
    v1::StepReport r = analysis::BuildStepReport(events, f.rank.strings, w, 1);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * events.size());
  state.counters["events_per_step"] = static_cast<double>(events.size());
  state.counters["time_per_1k_events"] = benchmark::Counter(
      static_cast<double>(events.size()) / 1000.0,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_StepReportScaling)->RangeMultiplier(4)->Range(1, 256)->Unit(benchmark::kMillisecond);

void BM_PeriodDetection(benchmark::State& state) {
  const Fixture& f = Get(synthetic::Scenario::kLaunchStorm, static_cast<int>(state.range(0)), false);
  for (auto _ : state) {
    auto steps = analysis::DetectPeriodicSteps(f.all, f.rank.strings);
    benchmark::DoNotOptimize(steps);
  }
  state.SetItemsProcessed(state.iterations() * f.all.size());
}
BENCHMARK(BM_PeriodDetection)->Arg(10)->Arg(40)->Unit(benchmark::kMillisecond);

void BM_Encode(benchmark::State& state) {
  const Fixture& f = Get(synthetic::Scenario::kHealthy, 8);
  const EventColumns& ev = f.rank.steps[5];
  size_t bytes = 0;
  for (auto _ : state) {
    BatchEncoder enc(&f.rank.strings);
    v1::EventBatch batch;
    enc.Encode(ev, 1, {}, &batch);
    v1::EventBatch steady;
    enc.Encode(ev, 2, {}, &steady);  // definitions already sent: the steady-state size
    bytes = steady.ByteSizeLong();
    benchmark::DoNotOptimize(bytes);
  }
  state.SetItemsProcessed(state.iterations() * ev.size() * 2);
  state.counters["wire_bytes_per_event"] = static_cast<double>(bytes) / ev.size();
}
BENCHMARK(BM_Encode)->Unit(benchmark::kMicrosecond);

void BM_Decode(benchmark::State& state) {
  const Fixture& f = Get(synthetic::Scenario::kHealthy, 8);
  const EventColumns& ev = f.rank.steps[5];
  BatchEncoder enc(&f.rank.strings);
  v1::EventBatch batch;
  enc.Encode(ev, 1, {}, &batch);
  ProcessDictionary dict;
  (void)dict.Apply(batch.dictionary());
  for (auto _ : state) {
    EventColumns out;
    (void)DecodeBatch(batch, dict, &out);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * ev.size());
}
BENCHMARK(BM_Decode)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpuspy

BENCHMARK_MAIN();
