// Live jobs are analysed incrementally: after new batches, a query re-analyses only the steps
// the new data can touch, and its reports are exactly those of a full analysis. Also
// DataVersions on its own.
#include <gtest/gtest.h>

#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <thread>
#include <vector>

#include "codec/batch_encoder.h"
#include "collector/ingest/batch_ingestor.h"
#include "collector/live/memory_totals.h"
#include "collector/query/query_engine.h"
#include "collector/storage/data_versions.h"
#include "tests/support/query_engine_parts.h"
#include "tests/support/store_rank.h"
#include "tests/support/subprocess.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy::collector {
namespace {

TEST(DataVersions, EarliestTimeTouchedSinceAVersion) {
  DataVersions v;
  EXPECT_EQ(v.Version(1), 0u);
  EXPECT_EQ(v.EarliestSince(1, 0), DataVersions::kNothing);
  v.Note(1, 500);
  v.Note(1, 300);  // a late batch: touches earlier time
  v.Note(1, 900);
  EXPECT_EQ(v.Version(1), 3u);
  EXPECT_EQ(v.EarliestSince(1, 0), 300);
  EXPECT_EQ(v.EarliestSince(1, 2), 900);
  EXPECT_EQ(v.EarliestSince(1, 3), DataVersions::kNothing);
  EXPECT_EQ(v.EarliestSince(2, 0), DataVersions::kNothing);
  for (size_t i = 0; i < DataVersions::kNotesKept + 10; ++i) v.Note(1, 1000);
  // Notes for versions 1..13 are gone: a cache that old must be rebuilt in full.
  EXPECT_EQ(v.EarliestSince(1, 1), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(v.EarliestSince(1, v.Version(1) - 1), 1000);
}

class IncrementalAnalysisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ingestor_ = std::make_unique<BatchIngestor>(parts_.store.get(), parts_.dictionaries.get(),
                                                &parts_.counters, analysis::StepSegmenter(),
                                                &versions_);
    synthetic::SyntheticOptions so;
    so.scenario = synthetic::Scenario::kSyncStall;
    so.steps = 30;
    so.job_id = "live";
    rank_ = synthetic::GenerateRank(so, 0);
    process_ = ingestor_->Hello(rank_.identity, 1)->process_id();
    encoder_ = std::make_unique<BatchEncoder>(&rank_.strings);
  }

  // Sends steps [first, last) as one batch each.
  void Send(size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      v1::EventBatch b;
      encoder_->Encode(rank_.steps[i], ++sequence_, {}, &b);
      ASSERT_TRUE(ingestor_->Ingest(process_, b).ok());
    }
  }

  v1::GetStepReportResponse All(QueryEngine& engine) {
    v1::GetStepReportRequest r;
    r.set_job_id("live");
    r.set_all(true);
    return *engine.GetStepReport(r);
  }

  testing::TempDir dir_;
  testing::QueryEngineParts parts_{dir_.path()};
  DataVersions versions_;
  std::unique_ptr<BatchIngestor> ingestor_;
  synthetic::SyntheticRank rank_;
  uint64_t process_ = 0;
  std::unique_ptr<BatchEncoder> encoder_;
  uint64_t sequence_ = 0;
};

TEST_F(IncrementalAnalysisTest, NewStepsAreAnalysedAloneAndReportsMatchAFullAnalysis) {
  const auto live_engine = parts_.Engine(&versions_);
  QueryEngine& live = *live_engine;
  Send(0, 20);
  ASSERT_EQ(All(live).reports_size(), 20);
  const uint64_t first = live.steps_analysed();
  EXPECT_EQ(first, 20u);

  Send(20, 25);
  v1::GetStepReportResponse incremental = All(live);
  ASSERT_EQ(incremental.reports_size(), 25);
  // The 5 new steps (and the last old one, if the new batch's first event starts before its
  // end), not the 20 before them.
  EXPECT_GE(live.steps_analysed() - first, 5u);
  EXPECT_LE(live.steps_analysed() - first, 6u);

  const auto fresh_engine = parts_.Engine();
  QueryEngine& fresh = *fresh_engine;
  v1::GetStepReportResponse full = All(fresh);
  ASSERT_EQ(full.reports_size(), 25);
  for (int i = 0; i < 25; ++i) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(incremental.reports(i), full.reports(i)))
        << "step " << i << "\n" << incremental.reports(i).DebugString() << "\nvs\n"
        << full.reports(i).DebugString();
  }
}

TEST_F(IncrementalAnalysisTest, QueriesArrivingTogetherAnalyseEachStepOnce) {
  // Four queries (the viewer, a CLI, the warmer...) ask for the same live process at once. One
  // analyses; the others wait for it and take what it cached, instead of each analysing all 30
  // steps alongside it (what made the first queries of each live job slow under load).
  const auto engine_ptr = parts_.Engine(&versions_);
  QueryEngine& engine = *engine_ptr;
  Send(0, 30);
  std::vector<std::thread> queries;
  std::atomic<int> answered{0};
  for (int i = 0; i < 4; ++i) {
    queries.emplace_back([&] {
      v1::GetStepReportRequest r;
      r.set_job_id("live");
      r.set_last(1);
      if (engine.GetStepReport(r).ok()) ++answered;
    });
  }
  for (std::thread& t : queries) t.join();
  EXPECT_EQ(answered.load(), 4);
  EXPECT_EQ(engine.steps_analysed(), 30u);
}

TEST_F(IncrementalAnalysisTest, ACancelledEngineStopsAnalysingAndSaysWhy) {
  const auto engine_engine = parts_.Engine(&versions_);
  QueryEngine& engine = *engine_engine;
  Send(0, 30);
  engine.Cancel();
  v1::GetStepReportRequest r;
  r.set_job_id("live");
  r.set_all(true);
  absl::StatusOr<v1::GetStepReportResponse> report = engine.GetStepReport(r);
  EXPECT_EQ(report.status().code(), absl::StatusCode::kCancelled) << report.status();
  EXPECT_EQ(engine.steps_analysed(), 0u);
  // What is stored is untouched: a fresh engine (the restarted daemon) analyses all of it.
  const auto fresh_engine = parts_.Engine();
  QueryEngine& fresh = *fresh_engine;
  EXPECT_EQ(All(fresh).reports_size(), 30);
}

TEST_F(IncrementalAnalysisTest, TheCacheStaysWithinItsBudgetAndEvictedProcessesAreAnalysedAgain) {
  // A second process in another job.
  synthetic::SyntheticOptions so;
  so.scenario = synthetic::Scenario::kLaunchStorm;
  so.steps = 20;
  so.job_id = "other";
  synthetic::SyntheticRank other = synthetic::GenerateRank(so, 0);
  testing::StoreRank(*ingestor_, other);
  Send(0, 30);
  auto report = [](QueryEngine& e, const std::string& job) {
    v1::GetStepReportRequest r;
    r.set_job_id(job);
    r.set_all(true);
    return *e.GetStepReport(r);
  };
  const auto unbounded_engine = parts_.Engine(&versions_);
  QueryEngine& unbounded = *unbounded_engine;
  const auto live_full = report(unbounded, "live");
  const auto other_full = report(unbounded, "other");
  const uint64_t one_process = unbounded.cache_bytes() / 2;
  ASSERT_GT(one_process, 0u);
  EXPECT_EQ(unbounded.cache_evictions(), 0u);

  const auto bounded_engine = parts_.Engine(&versions_);
  QueryEngine& bounded = *bounded_engine;
  bounded.set_cache_budget(one_process);  // room for about one of the two
  auto same = [](const v1::GetStepReportResponse& a, const v1::GetStepReportResponse& b) {
    return google::protobuf::util::MessageDifferencer::Equals(a, b);
  };
  EXPECT_TRUE(same(report(bounded, "live"), live_full));
  const uint64_t analysed = bounded.steps_analysed();
  EXPECT_TRUE(same(report(bounded, "other"), other_full));
  EXPECT_EQ(bounded.cache_evictions(), 1u) << "live made room for other";
  EXPECT_LE(bounded.cache_bytes(), std::max(one_process, unbounded.cache_bytes() - one_process) + 1);
  // Evicted: analysed again, with the same result; other (cached) is not.
  EXPECT_TRUE(same(report(bounded, "live"), live_full));
  EXPECT_EQ(bounded.steps_analysed(), analysed + 20 + 30);
  EXPECT_EQ(bounded.GetStats().stats().analysis_cache_evictions(), 2u);
  EXPECT_EQ(bounded.GetStats().stats().analysis_cache_budget_bytes(), one_process);
}

TEST_F(IncrementalAnalysisTest, ALateBatchReanalysesTheStepsItTouches) {
  const auto live_engine = parts_.Engine(&versions_);
  QueryEngine& live = *live_engine;
  // Steps 0-9 and 12-19 arrive first; 10 and 11 come late (a spill replayed after an outage).
  Send(0, 10);
  for (size_t i = 12; i < 20; ++i) {
    v1::EventBatch b;
    encoder_->Encode(rank_.steps[i], 100 + i, {}, &b);
    ASSERT_TRUE(ingestor_->Ingest(process_, b).ok());
  }
  ASSERT_EQ(All(live).reports_size(), 18);
  const uint64_t before = live.steps_analysed();
  for (size_t i = 10; i < 12; ++i) {
    v1::EventBatch b;
    encoder_->Encode(rank_.steps[i], 50 + i, {}, &b);
    ASSERT_TRUE(ingestor_->Ingest(process_, b).ok());
  }
  v1::GetStepReportResponse after = All(live);
  ASSERT_EQ(after.reports_size(), 20);
  // Steps 10 onwards end after the late batches' earliest event: re-analysed; 0-8 kept (9 too
  // unless step 10's first event starts before step 9's range ends).
  EXPECT_GE(live.steps_analysed() - before, 10u);
  EXPECT_LE(live.steps_analysed() - before, 11u);
  const auto fresh_engine = parts_.Engine();
  QueryEngine& fresh = *fresh_engine;
  v1::GetStepReportResponse full = All(fresh);
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(after.reports(i), full.reports(i)))
        << "step " << i;
  }
}

// Device memory levels need everything before a step, not just its window: weights loaded
// before the profiler's first step count in every step, and a step analysed on its own (new
// data) gets the same level as in a full analysis.
TEST_F(IncrementalAnalysisTest, StartUpMemoryIsCarriedIntoEveryStepAndALeakIsFoundIncrementally) {
  synthetic::SyntheticOptions so;
  so.scenario = synthetic::Scenario::kMemoryLeak;
  so.steps = 10;
  so.job_id = "leaky";
  synthetic::SyntheticRank rank = synthetic::GenerateRank(so, 0);
  const uint64_t process = ingestor_->Hello(rank.identity, 1)->process_id();
  BatchEncoder encoder(&rank.strings);
  uint64_t sequence = 0;
  auto send = [&](const EventColumns& ev) {
    v1::EventBatch b;
    encoder.Encode(ev, ++sequence, {}, &b);
    ASSERT_TRUE(ingestor_->Ingest(process, b).ok());
  };
  int64_t first_step_ns = std::numeric_limits<int64_t>::max();
  for (const auto& r : rank.steps[0].nvtx_ranges) first_step_ns = std::min(first_step_ns, r.start_ns);
  constexpr uint64_t kStartUpBytes = 3ull << 30;
  EventColumns start_up;
  start_up.memory.push_back({first_step_ns - 5'000'000, 0, {}, MemoryOpKind::kAlloc,
                             MemoryKind::kDevice, false, 0x10, kStartUpBytes});
  send(start_up);
  for (size_t i = 0; i < 6; ++i) send(rank.steps[i]);

  v1::GetStepReportRequest all;
  all.set_job_id("leaky");
  all.set_all(true);
  const auto live_engine = parts_.Engine(&versions_);
  QueryEngine& live = *live_engine;
  v1::GetStepReportResponse early = *live.GetStepReport(all);
  ASSERT_EQ(early.reports_size(), 6);
  ASSERT_TRUE(early.reports(0).has_memory());
  EXPECT_EQ(early.reports(0).memory().reserved_start_bytes(), static_cast<int64_t>(kStartUpBytes));

  for (size_t i = 6; i < 10; ++i) send(rank.steps[i]);
  v1::GetStepReportResponse incremental = *live.GetStepReport(all);
  const auto fresh_engine = parts_.Engine();
  v1::GetStepReportResponse full = *fresh_engine->GetStepReport(all);
  ASSERT_EQ(incremental.reports_size(), 10);
  ASSERT_EQ(full.reports_size(), 10);
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(incremental.reports(i).memory(),
                                                                   full.reports(i).memory()))
        << "step " << i;
    EXPECT_GT(full.reports(i).memory().reserved_start_bytes(), static_cast<int64_t>(kStartUpBytes) - 1);
  }
  const v1::StepReport& last = incremental.reports(9);
  EXPECT_EQ(last.primary_bottleneck(), v1::memory_growth);
  // 1 GiB of weights at step 0, then 64 MiB a step: 3 GiB + 1 GiB + 10 x 64 MiB at the end.
  EXPECT_EQ(last.memory().reserved_end_bytes(),
            static_cast<int64_t>(kStartUpBytes + (1ull << 30) + 10 * (64ull << 20)));
}

// A store fed by ingest, with its data versions, as gpuspyd wires them.
class StoredJobTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  testing::QueryEngineParts parts_{dir_.path()};
  DataVersions versions_;
  BatchIngestor ingestor_{parts_.store.get(), parts_.dictionaries.get(), &parts_.counters,
                          analysis::StepSegmenter(), &versions_};
};
using RecentStepReports = StoredJobTest;
using FinishedJobReportsKept = StoredJobTest;

// Issue 34 item 9: the report of a live job's last step analysed every step of the job (again,
// whenever new batches had come in: always, under unpaced producers). It analyses that step and
// the stretch before it that the cross-step passes compare with; a step more costs a step more.
TEST_F(RecentStepReports, ALiveJobsLastStepCostsItsStretchNotTheJob) {
  synthetic::SyntheticOptions so;
  so.scenario = synthetic::Scenario::kSyncStall;
  so.steps = 120;
  so.job_id = "long";
  synthetic::SyntheticRank rank = synthetic::GenerateRank(so, 0);
  const uint64_t process = ingestor_.Hello(rank.identity, 1)->process_id();
  BatchEncoder encoder(&rank.strings);
  uint64_t sequence = 0;
  auto send = [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      v1::EventBatch b;
      encoder.Encode(rank.steps[i], ++sequence, {}, &b);
      ASSERT_TRUE(ingestor_.Ingest(process, b).ok());
    }
  };
  send(0, 100);
  auto push = [](const v1::ServerMessage&) { return true; };
  const uint64_t stream = parts_.connections.Opened(process, rank.identity, v1::CaptureMode{}, push, 1);
  const auto engine = parts_.Engine(&versions_);
  v1::GetStepReportRequest last;
  last.set_job_id("long");
  last.set_last(1);
  absl::StatusOr<v1::GetStepReportResponse> recent = engine->GetStepReport(last);
  ASSERT_TRUE(recent.ok()) << recent.status();
  ASSERT_EQ(recent->reports_size(), 1);
  EXPECT_EQ(recent->reports(0).step().number(), 99);
  // The step and the 16 before it, not 100 (before: every step of the job).
  EXPECT_EQ(engine->steps_analysed(), 17u);

  // Its own figures are those of the whole-job analysis (a finished job's, exact).
  parts_.connections.Closed(process, stream);
  const auto whole_engine = parts_.Engine(&versions_);
  absl::StatusOr<v1::GetStepReportResponse> whole = whole_engine->GetStepReport(last);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(whole->reports_size(), 1);
  EXPECT_EQ(whole_engine->steps_analysed(), 100u);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(recent->reports(0).breakdown(),
                                                                 whole->reports(0).breakdown()));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(recent->reports(0).memory(),
                                                                 whole->reports(0).memory()))
      << recent->reports(0).memory().DebugString() << " vs " << whole->reports(0).memory().DebugString();
  EXPECT_EQ(recent->reports(0).primary_bottleneck(), whole->reports(0).primary_bottleneck());

  // Five more steps while it runs: the new steps (and the one the new data may touch) only.
  parts_.connections.Opened(process, rank.identity, v1::CaptureMode{}, push, 2);
  send(100, 105);
  const uint64_t before = engine->steps_analysed();
  recent = engine->GetStepReport(last);
  ASSERT_TRUE(recent.ok()) << recent.status();
  EXPECT_EQ(recent->reports(0).step().number(), 104);
  EXPECT_LE(engine->steps_analysed() - before, 6u);
}

// Unpaced ranks run far apart: `--last 1` of the job is the newest step both have, each rank's
// stretch 17 steps, not everything between the ranks' positions.
TEST_F(RecentStepReports, RanksFarApartAreReportedAtTheNewestStepBothReached) {
  synthetic::SyntheticOptions so;
  so.scenario = synthetic::Scenario::kSyncStall;
  so.steps = 100;
  so.ranks = 2;
  so.job_id = "apart";
  std::vector<synthetic::SyntheticRank> ranks = synthetic::GenerateJob(so);
  ASSERT_EQ(ranks.size(), 2u);
  const size_t sent[2] = {100, 60};
  auto push = [](const v1::ServerMessage&) { return true; };
  for (size_t r = 0; r < 2; ++r) {
    const uint64_t process = ingestor_.Hello(ranks[r].identity, 1)->process_id();
    BatchEncoder encoder(&ranks[r].strings);
    for (size_t i = 0; i < sent[r]; ++i) {
      v1::EventBatch b;
      encoder.Encode(ranks[r].steps[i], i + 1, {}, &b);
      ASSERT_TRUE(ingestor_.Ingest(process, b).ok());
    }
    parts_.connections.Opened(process, ranks[r].identity, v1::CaptureMode{}, push, 1);
  }
  const auto engine = parts_.Engine(&versions_);
  v1::GetStepReportRequest last;
  last.set_job_id("apart");
  last.set_last(1);
  absl::StatusOr<v1::GetStepReportResponse> recent = engine->GetStepReport(last);
  ASSERT_TRUE(recent.ok()) << recent.status();
  ASSERT_EQ(recent->reports_size(), 2);
  EXPECT_EQ(recent->reports(0).step().number(), 59);
  EXPECT_EQ(recent->reports(1).step().number(), 59);
  EXPECT_EQ(engine->steps_analysed(), 2u * 17u);
}

// Review of issue 34 item 9: every query (and warmer round) decoded what had arrived since the
// last one to keep the memory before the stretch absolute, and under unpaced producers that
// re-decode slowed ingest 4x (127-151 s instead of 34 s). Ingest keeps the totals as it stores
// (MemoryTotals): a live job's recent step reads no batch for them, with the same levels.
TEST_F(RecentStepReports, MemoryBeforeTheStretchComesFromIngestsTotalsNotFromTheStore) {
  MemoryTotals totals;
  ingestor_.set_memory_totals(&totals);
  synthetic::SyntheticOptions so;
  so.scenario = synthetic::Scenario::kMemoryLeak;
  so.steps = 60;
  so.job_id = "leaky";
  synthetic::SyntheticRank rank = synthetic::GenerateRank(so, 0);
  const uint64_t process = testing::StoreRank(ingestor_, rank);
  auto push = [](const v1::ServerMessage&) { return true; };
  const uint64_t stream = parts_.connections.Opened(process, rank.identity, v1::CaptureMode{}, push, 1);
  const auto engine = parts_.Engine(&versions_);
  engine->set_memory_totals(&totals);
  v1::GetStepReportRequest last;
  last.set_job_id("leaky");
  last.set_last(1);
  absl::StatusOr<v1::GetStepReportResponse> recent = engine->GetStepReport(last);
  ASSERT_TRUE(recent.ok()) << recent.status();
  ASSERT_EQ(recent->reports_size(), 1);
  EXPECT_EQ(engine->steps_analysed(), 17u);
  // Before: the 43 steps' batches before the stretch were read (and again, what arrived since,
  // on every later query).
  EXPECT_EQ(engine->memory_prefix_batches_read(), 0u);
  EXPECT_EQ(engine->memory_totals_used(), 1u);

  parts_.connections.Closed(process, stream);
  const auto whole_engine = parts_.Engine(&versions_);
  absl::StatusOr<v1::GetStepReportResponse> whole = whole_engine->GetStepReport(last);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole_engine->steps_analysed(), 60u);
  ASSERT_TRUE(recent->reports(0).has_memory());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(recent->reports(0).memory(),
                                                                 whole->reports(0).memory()))
      << recent->reports(0).memory().DebugString() << " vs " << whole->reports(0).memory().DebugString();
  EXPECT_EQ(recent->reports(0).memory().reserved_end_bytes(),
            static_cast<int64_t>((1ull << 30) + 60 * (64ull << 20)));
}

// Review of issue 34 item 9: a report asked as a large job ended took the finished-job path and
// analysed every step on the spot (98 s for 40 M events). Until the whole job is analysed in the
// background, --last/--step of a large finished job are answered from the recent stretch (the
// answer it had a moment before, while live); once it is, they are the whole job's, exact.
TEST_F(RecentStepReports, ALargeJobJustFinishedIsAnsweredFromItsStretchUntilTheWholeJobIsWarm) {
  synthetic::SyntheticOptions so;
  so.scenario = synthetic::Scenario::kSyncStall;
  so.steps = 100;
  so.job_id = "ended";
  synthetic::SyntheticRank rank = synthetic::GenerateRank(so, 0);
  const uint64_t process = testing::StoreRank(ingestor_, rank);
  auto push = [](const v1::ServerMessage&) { return true; };
  const uint64_t stream = parts_.connections.Opened(process, rank.identity, v1::CaptureMode{}, push, 1);
  const auto engine = parts_.Engine(&versions_);
  engine->set_whole_job_on_the_spot_events(1);  // this job counts as large
  EXPECT_FALSE(*engine->WarmWholeJob("ended")) << "still live: nothing to warm yet";
  parts_.connections.Closed(process, stream);

  v1::GetStepReportRequest last;
  last.set_job_id("ended");
  last.set_last(1);
  absl::StatusOr<v1::GetStepReportResponse> early = engine->GetStepReport(last);
  ASSERT_TRUE(early.ok()) << early.status();
  ASSERT_EQ(early->reports_size(), 1);
  EXPECT_EQ(early->reports(0).step().number(), 99);
  EXPECT_EQ(engine->steps_analysed(), 17u) << "before: all 100 steps, on the spot";

  // The warmer's part: every step, once.
  ASSERT_TRUE(*engine->WarmWholeJob("ended"));
  EXPECT_EQ(engine->steps_analysed(), 17u + 100u);
  absl::StatusOr<v1::GetStepReportResponse> exact = engine->GetStepReport(last);
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(engine->steps_analysed(), 117u) << "served from the cache";
  const auto reference = parts_.Engine(&versions_);  // a small job's path: the whole job on the spot
  absl::StatusOr<v1::GetStepReportResponse> whole = reference->GetStepReport(last);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*exact, *whole))
      << exact->DebugString() << "\nvs\n" << whole->DebugString();
  // The stretch's answer agreed on what it says of the step itself.
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(early->reports(0).breakdown(),
                                                                 whole->reports(0).breakdown()));
  EXPECT_EQ(early->reports(0).primary_bottleneck(), whole->reports(0).primary_bottleneck());
}

// Review of issue 34 item 9: once a large finished job had been analysed whole, each --step/--last
// still copied every step's cached analysis and ran the job-level passes over all of them again
// (1.0-1.9 s per query for 15.9 M events). A finished job's reports are kept once made: later
// reports of any of its steps are a lookup, the same reports; a new step pattern makes them again.
TEST_F(FinishedJobReportsKept, AFinishedJobsReportsAreMadeOnceAndServedAgainExactly) {
  for (int r = 0; r < 2; ++r) {
    synthetic::SyntheticOptions so;
    so.scenario = synthetic::Scenario::kStragglerCompute;
    so.steps = 30;
    so.ranks = 2;
    so.job_id = "done";
    synthetic::SyntheticRank rank = synthetic::GenerateRank(so, r);
    testing::StoreRank(ingestor_, rank);
  }
  const auto engine = parts_.Engine(&versions_);
  v1::GetStepReportRequest last;
  last.set_job_id("done");
  last.set_last(1);
  absl::StatusOr<v1::GetStepReportResponse> first = engine->GetStepReport(last);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->reports_size(), 2);
  EXPECT_EQ(engine->jobs_analysed(), 1u);
  EXPECT_GT(engine->finished_reports_bytes(), 0u);

  // Other steps, the same step again, every step: no job-level pass, no step analysed.
  const uint64_t steps_before = engine->steps_analysed();
  v1::GetStepReportRequest step5;
  step5.set_job_id("done");
  step5.set_step(5);
  v1::GetStepReportRequest all;
  all.set_job_id("done");
  all.set_all(true);
  absl::StatusOr<v1::GetStepReportResponse> again = engine->GetStepReport(last);
  absl::StatusOr<v1::GetStepReportResponse> fifth = engine->GetStepReport(step5);
  absl::StatusOr<v1::GetStepReportResponse> every = engine->GetStepReport(all);
  ASSERT_TRUE(again.ok() && fifth.ok() && every.ok());
  EXPECT_EQ(engine->jobs_analysed(), 1u) << "before: the job-level passes on every query";
  EXPECT_EQ(engine->steps_analysed(), steps_before);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*first, *again));
  EXPECT_EQ(fifth->reports_size(), 2);
  EXPECT_EQ(every->reports_size(), 2 * 30);

  // The same reports as an engine that never kept any.
  const auto reference = parts_.Engine(&versions_);
  absl::StatusOr<v1::GetStepReportResponse> fresh = reference->GetStepReport(step5);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*fifth, *fresh))
      << fifth->DebugString() << "\nvs\n" << fresh->DebugString();

  // Asking for one rank selects from the kept reports too.
  v1::GetStepReportRequest one_rank = step5;
  one_rank.set_process_id(fifth->reports(0).step().process_id());
  absl::StatusOr<v1::GetStepReportResponse> rank_only = engine->GetStepReport(one_rank);
  ASSERT_TRUE(rank_only.ok()) << rank_only.status();
  ASSERT_EQ(rank_only->reports_size(), 1);
  EXPECT_EQ(rank_only->reports(0).step().process_id(), one_rank.process_id());
  EXPECT_EQ(engine->jobs_analysed(), 1u);
}

}  // namespace
}  // namespace gpuspy::collector
