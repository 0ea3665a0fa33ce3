// Report latency: the query engine's answers for a stored job, read back from the embedded store
// as gpuspyd serves them. The job is the demo's (2 ranks of a synthetic scenario, batches of whole
// steps cut at 4096 events, as gpuspy-replay sends them), stored once through BatchIngestor.
//   cold:   a fresh QueryEngine per iteration (nothing cached): read + decode + analyse every step
//   cached: the same engine again (what a second look at the job page costs)
// Google Benchmark; the argument is the scenario (0 sync_stall, 1 launch_storm).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "codec/batch_encoder.h"
#include "collector/ingest/batch_ingestor.h"
#include "tests/support/query_engine_parts.h"
#include "tests/support/subprocess.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy::collector {
namespace {

constexpr size_t kBatchEvents = 4096;  // gpuspy-replay's default (--batch-events)
constexpr int kSteps = 20;
constexpr int kRanks = 2;

synthetic::Scenario ScenarioOf(const benchmark::State& state) {
  return state.range(0) == 0 ? synthetic::Scenario::kSyncStall : synthetic::Scenario::kLaunchStorm;
}

// A job stored once per scenario and kept for the whole run.
struct StoredJob {
  testing::TempDir dir;
  testing::QueryEngineParts parts{dir.path()};
  std::string job_id;
  size_t events = 0;
};

StoredJob& JobFor(synthetic::Scenario scenario) {
  static auto* jobs = new std::map<synthetic::Scenario, std::unique_ptr<StoredJob>>();
  std::unique_ptr<StoredJob>& job = (*jobs)[scenario];
  if (job != nullptr) return *job;
  job = std::make_unique<StoredJob>();
  synthetic::SyntheticOptions options;
  options.scenario = scenario;
  options.steps = kSteps;
  options.ranks = kRanks;
  options.job_id = "bench-" + synthetic::ScenarioName(scenario);
  job->job_id = options.job_id;
  BatchIngestor ingestor(job->parts.store.get(), job->parts.dictionaries.get(), &job->parts.counters,
                         analysis::StepSegmenter());
  for (const synthetic::SyntheticRank& rank : synthetic::GenerateJob(options)) {
    const uint64_t process = ingestor.Hello(rank.identity, 1)->process_id();
    BatchEncoder encoder(&rank.strings);
    uint64_t sequence = 0;
    EventColumns chunk;
    auto send = [&] {
      v1::EventBatch batch;
      encoder.Encode(chunk, ++sequence, {}, &batch);
      if (absl::StatusOr<v1::Ack> ack = ingestor.Ingest(process, batch); !ack.ok()) {
        std::fprintf(stderr, "ingest: %s\n", ack.status().ToString().c_str());
        std::abort();
      }
      job->events += chunk.size();
      chunk.clear();
    };
    for (const EventColumns& step : rank.steps) {
      if (chunk.size() >= kBatchEvents) send();
      chunk.Append(step);
    }
    if (!chunk.empty()) send();
  }
  return *job;
}

v1::GetStepReportRequest AllSteps(const StoredJob& job) {
  v1::GetStepReportRequest r;
  r.set_job_id(job.job_id);
  r.set_all(true);
  return r;
}

void Label(benchmark::State& state, const StoredJob& job) {
  state.SetLabel(synthetic::ScenarioName(ScenarioOf(state)));
  state.counters["events"] = static_cast<double>(job.events);
}

// Every step report of the job (GET /api/jobs/{job}/steps?all, `gpuspy report --all`), cold.
void BM_StepReportsCold(benchmark::State& state) {
  StoredJob& job = JobFor(ScenarioOf(state));
  const v1::GetStepReportRequest request = AllSteps(job);
  for (auto _ : state) {
    std::unique_ptr<QueryEngine> engine = job.parts.Engine();
    absl::StatusOr<v1::GetStepReportResponse> reports = engine->GetStepReport(request);
    if (!reports.ok()) state.SkipWithError(reports.status().ToString().c_str());
    benchmark::DoNotOptimize(reports);
  }
  Label(state, job);
}
BENCHMARK(BM_StepReportsCold)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);

// The job summary (the job page), cold: every step analysed, then cross-step and cross-rank.
void BM_JobSummaryCold(benchmark::State& state) {
  StoredJob& job = JobFor(ScenarioOf(state));
  v1::GetJobSummaryRequest request;
  request.set_job_id(job.job_id);
  for (auto _ : state) {
    std::unique_ptr<QueryEngine> engine = job.parts.Engine();
    absl::StatusOr<v1::GetJobSummaryResponse> summary = engine->GetJobSummary(request);
    if (!summary.ok()) state.SkipWithError(summary.status().ToString().c_str());
    benchmark::DoNotOptimize(summary);
  }
  Label(state, job);
}
BENCHMARK(BM_JobSummaryCold)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);

// Every step report again from the same engine: served from its per-process analysis cache.
void BM_StepReportsCached(benchmark::State& state) {
  StoredJob& job = JobFor(ScenarioOf(state));
  const v1::GetStepReportRequest request = AllSteps(job);
  std::unique_ptr<QueryEngine> engine = job.parts.Engine();
  (void)engine->GetStepReport(request);
  for (auto _ : state) {
    absl::StatusOr<v1::GetStepReportResponse> reports = engine->GetStepReport(request);
    if (!reports.ok()) state.SkipWithError(reports.status().ToString().c_str());
    benchmark::DoNotOptimize(reports);
  }
  Label(state, job);
}
BENCHMARK(BM_StepReportsCached)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuspy::collector

BENCHMARK_MAIN();
