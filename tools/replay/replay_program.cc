// gpuspy-replay: streams synthetic PyTorch-like training jobs into gpuspyd through the real
// gRPC ingest path (the same client and encoder the injected library uses). For demos without a
// GPU, end-to-end tests, and load generation.
#include "tools/replay/replay_program.h"

#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <google/protobuf/util/json_util.h>

#include "CLI/CLI.hpp"
#include "client/transport/event_upload.h"
#include "codec/expanded_events.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy::replay {
namespace {

using gpuspy::synthetic::Scenario;

struct RankResult {
  absl::Status status;
  size_t events = 0;
  size_t batches = 0;
  size_t wire_bytes = 0;
};

RankResult ReplayRank(const std::string& address, const gpuspy::synthetic::SyntheticRank& rank,
                      size_t batch_events, const gpuspy::UploadOptions& upload) {
  // Whole steps per batch, cut once a batch holds batch_events or more.
  std::vector<gpuspy::EventColumns> chunks(1);
  for (const gpuspy::EventColumns& step : rank.steps) {
    if (chunks.back().size() >= batch_events) chunks.emplace_back();
    chunks.back().Append(step);
  }
  RankResult r;
  absl::StatusOr<gpuspy::UploadResult> up =
      gpuspy::UploadEvents(address, rank.identity, rank.strings, chunks, upload);
  if (!up.ok()) {
    r.status = up.status();
    return r;
  }
  r.events = up->events;
  r.batches = up->batches;
  r.wire_bytes = up->wire_bytes;
  return r;
}

void DumpEvents(std::ofstream& out, int rank, const gpuspy::synthetic::SyntheticRank& data) {
  std::vector<gpuspy::v1::Event> expanded;
  for (const auto& step : data.steps) gpuspy::ToExpandedEvents(step, data.strings, &expanded);
  for (const auto& e : expanded) {
    std::string json;
    (void)google::protobuf::util::MessageToJsonString(e, &json);
    out << "{\"rank\": " << rank << ", \"event\": " << json << "}\n";
  }
}

}  // namespace

int RunReplay(int argc, char** argv) {
  std::string collector = "127.0.0.1:7070";
  if (const char* env = std::getenv("GPUSPY_COLLECTOR"); env != nullptr && *env) collector = env;
  gpuspy::synthetic::SyntheticOptions options;
  options.job_id = "demo";
  std::string scenario = "healthy";
  std::string dump;
  size_t batch_events = 4096;
  int first_rank = 0;
  double retry_for_s = 0, batch_ms = 0;

  CLI::App app{"gpuspy-replay: stream a synthetic PyTorch-like training job into gpuspyd",
               "gpuspy-replay"};
  app.add_option("--collector", collector, "gpuspyd address (host:port or unix:/path)")
      ->capture_default_str();
  app.add_option("--job", options.job_id, "Job id the processes report")->capture_default_str();
  app.add_option("--ranks", options.ranks, "Processes (ranks) of the job")
      ->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("--steps", options.steps, "Training steps per rank")
      ->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--warmup-steps", options.warmup_steps, "Leading slow steps")
      ->check(CLI::Range(0, 1000))->capture_default_str();
  app.add_option("--slow-rank", options.slow_rank,
                 "Make this rank a straggler (-1: none; straggler_* scenarios: rank 2, or 1 with 2 "
                 "ranks)")
      ->capture_default_str();
  double clock_skew_ms = 0;
  app.add_option("--clock-skew-ms", clock_skew_ms,
                 "Shift each rank's timestamps by a deterministic offset within +-this many ms "
                 "(unsynchronized host clocks)")
      ->check(CLI::Range(0.0, 60'000.0))->capture_default_str();
  std::string collective_args = "auto";
  app.add_option("--collective-args", collective_args,
                 "Attach op/bytes/group to NCCL kernels as a Kineto trace does (auto: on for the "
                 "multi-rank scenarios; off: only kernel names, as live capture)")
      ->check(CLI::IsMember({"auto", "on", "off"}))->capture_default_str();
  bool no_nvtx = false;
  app.add_flag("--fixed", options.fixed,
               "Replay the scenario's fixed twin: the same seed with its cause removed (the fix its "
               "finding names applied), to measure what the fix saves");
  app.add_flag("--no-nvtx", no_nvtx, "Emit no ProfilerStep ranges (steps must be found by period)");
  app.add_option("--seed", options.seed, "Random seed (same seed, same events)")->capture_default_str();
  std::vector<std::string> names;
  for (Scenario s : gpuspy::synthetic::AllScenarios()) names.push_back(gpuspy::synthetic::ScenarioName(s));
  for (Scenario s : gpuspy::synthetic::MultiRankScenarios()) {
    names.push_back(gpuspy::synthetic::ScenarioName(s));
  }
  for (Scenario s : gpuspy::synthetic::WhatIfShapeScenarios()) {
    names.push_back(gpuspy::synthetic::ScenarioName(s));
  }
  app.add_option("--scenario", scenario,
                 "Pathology to reproduce (straggler_compute, straggler_input, exposed_comm and "
                 "comm_storm need 2 or more ranks)")
      ->check(CLI::IsMember(names))->capture_default_str();
  app.add_option("--batch-events", batch_events, "Events per wire batch")
      ->check(CLI::Range(size_t{1}, size_t{1'000'000}))->capture_default_str();
  app.add_option("--first-rank", first_rank,
                 "Number the ranks from here (several replays = one job's ranks on several nodes)")
      ->check(CLI::Range(0, 100000))->capture_default_str();
  app.add_option("--retry-for", retry_for_s,
                 "Seconds to keep reconnecting after a failure, resuming after what is stored")
      ->capture_default_str();
  app.add_option("--batch-ms", batch_ms, "Send one batch per this many ms (a live process's pace)")
      ->capture_default_str();
  std::string acked;
  app.add_option("--acked-file", acked,
                 "Append \"RANK SEQUENCE\" to this file as each batch is acknowledged (crash tests "
                 "check that every acknowledged batch survives)");
  app.add_option("--dump-events", dump,
                 "Write every sent event as JSON lines {\"rank\": R, \"event\": {...}}");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "gpuspy-replay: %s\n%s", e.what(), app.help().c_str());
    return 2;
  }
  gpuspy::synthetic::ParseScenario(scenario, &options.scenario);
  options.nvtx_steps = !no_nvtx;
  options.clock_skew_ns = static_cast<int64_t>(clock_skew_ms * 1e6);
  if (collective_args != "auto") options.emit_collective_args = collective_args == "on";

  const int count = options.ranks;
  options.ranks = first_rank + count;  // the job's world size
  if (gpuspy::synthetic::IsMultiRank(options.scenario) && options.ranks < 2) {
    std::fprintf(stderr, "gpuspy-replay: --scenario %s needs --ranks 2 or more\n",
                 scenario.c_str());
    return 2;
  }
  // The whole job is simulated together (its collectives must match); this replay sends its
  // ranks of it, so replays with different --first-rank make up one consistent job.
  std::vector<gpuspy::synthetic::SyntheticRank> ranks =
      gpuspy::synthetic::GenerateRanks(options, first_rank, count);
  gpuspy::UploadOptions upload;
  upload.retry_for = absl::Milliseconds(static_cast<int64_t>(retry_for_s * 1000));
  upload.chunk_interval = absl::Milliseconds(static_cast<int64_t>(batch_ms));

  std::mutex acked_mu;
  std::FILE* acked_out = acked.empty() ? nullptr : std::fopen(acked.c_str(), "a");
  if (!acked.empty() && acked_out == nullptr) {
    std::fprintf(stderr, "gpuspy-replay: cannot write %s\n", acked.c_str());
    return 1;
  }
  std::vector<RankResult> results(ranks.size());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < ranks.size(); ++r) {
    gpuspy::UploadOptions rank_upload = upload;
    if (acked_out != nullptr) {
      rank_upload.on_ack = [&, rank = ranks[r].identity.rank()](uint64_t sequence) {
        std::lock_guard lock(acked_mu);
        std::fprintf(acked_out, "%d %llu\n", rank, static_cast<unsigned long long>(sequence));
        std::fflush(acked_out);  // the test reads it right after killing the collector
      };
    }
    threads.emplace_back([&, r, rank_upload] {
      results[r] = ReplayRank(collector, ranks[r], batch_events, rank_upload);
    });
  }
  for (auto& t : threads) t.join();
  if (acked_out != nullptr) std::fclose(acked_out);

  // When every rank failed the same way (collector down), one line says it.
  bool one_failure_for_all = true;
  for (const RankResult& res : results) {
    one_failure_for_all = one_failure_for_all && !res.status.ok() &&
                          res.status.message() == results.front().status.message();
  }
  if (one_failure_for_all) {
    std::fprintf(stderr, "gpuspy-replay: %s\n", std::string(results.front().status.message()).c_str());
    return 1;
  }
  int exit_code = 0;
  for (size_t r = 0; r < results.size(); ++r) {
    const RankResult& res = results[r];
    if (!res.status.ok()) {
      std::fprintf(stderr, "gpuspy-replay: rank %zu: %s\n", r, std::string(res.status.message()).c_str());
      exit_code = 1;
      continue;
    }
    std::printf("rank %d: %zu events in %zu batches, %zu bytes on the wire (%.1f B/event)\n",
                ranks[r].identity.rank(),
                res.events, res.batches, res.wire_bytes,
                res.events > 0 ? static_cast<double>(res.wire_bytes) / res.events : 0.0);
  }
  if (!dump.empty()) {
    std::ofstream out(dump);
    for (size_t r = 0; r < ranks.size(); ++r) DumpEvents(out, static_cast<int>(r), ranks[r]);
    if (!out) {
      std::fprintf(stderr, "gpuspy-replay: cannot write %s\n", dump.c_str());
      return 1;
    }
  }
  return exit_code;
}

}  // namespace gpuspy::replay
