#include "tests/e2e/fault_harness.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "gpuspy/v1/services.grpc.pb.h"
#include "tests/support/all_events.h"

namespace gpuspy::testing {
namespace {

std::unique_ptr<v1::Query::Stub> QueryStub(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // a whole job's events
  return v1::Query::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
}

long StatusField(pid_t pid, const char* field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) return std::atol(line.c_str() + prefix.size());
  }
  return 0;
}

// Events of the kinds fake_train counts, as the collector stores them (a range is one event).
constexpr const char* kKinds[] = {"kernels", "runtime_api", "driver_api", "memcpy", "memset",
                                  "sync", "alloc", "free", "nvtx_ranges", "nvtx_marks",
                                  "external_correlations", "memory_pools"};

}  // namespace

FaultyDaemon::FaultyDaemon(std::string dir, std::vector<std::string> extra_args)
    : daemon_({.binary = GPUSPYD_BIN, .dir = std::move(dir), .log_level = "info",
               .flags = std::move(extra_args), .start_timeout = std::chrono::milliseconds(15000)}) {}

FaultyDaemon::~FaultyDaemon() {
  if (daemon_.started()) Kill();
}

bool FaultyDaemon::Start() {
  if (port_ == 0) port_ = FreeTcpPort();
  // A port just released by a killed daemon can take a moment to bind again.
  for (int attempt = 0; attempt < 20; ++attempt) {
    if (StartOn(port_)) return true;
    usleep(100'000);
  }
  return false;
}

bool FaultyDaemon::StartPrivately() { return StartOn(0); }

bool FaultyDaemon::StartOn(int port) {
  daemon_.set_port(port);
  const bool up = daemon_.Start();
  current_port_ = daemon_.port();
  if (up) return true;
  daemon_.Stop(SIGKILL);
  current_port_ = 0;
  return false;
}

void FaultyDaemon::Kill() { Stop(SIGKILL); }

int FaultyDaemon::Stop(int sig) {
  if (!daemon_.started()) return 0;
  kill(daemon_.pid(), SIGCONT);  // a frozen daemon could not act on SIGTERM
  const int code = daemon_.Stop(sig, std::chrono::milliseconds(15000));
  current_port_ = 0;
  return code;
}

void FaultyDaemon::Freeze() {
  if (daemon_.started()) kill(daemon_.pid(), SIGSTOP);
}

void FaultyDaemon::Thaw() {
  if (daemon_.started()) kill(daemon_.pid(), SIGCONT);
}

pid_t FaultyDaemon::pid() const { return daemon_.pid(); }

std::string FaultyDaemon::address() const {
  return "127.0.0.1:" + std::to_string(current_port_);
}

std::string FaultyDaemon::public_address() const { return "127.0.0.1:" + std::to_string(port_); }

std::string FaultyDaemon::log() const { return daemon_.log(); }

long FaultyDaemon::PeakRssKb() const { return daemon_.started() ? StatusField(daemon_.pid(), "VmHWM") : 0; }

long FaultyDaemon::RssKb() const { return daemon_.started() ? StatusField(daemon_.pid(), "VmRSS") : 0; }

std::vector<std::string> InjectEnv(const std::string& job, const std::string& collector,
                                   const std::string& spill_dir) {
  return {"LD_PRELOAD=" + std::string(SHIM_LIB),
          "GPUSPY_CUPTI_PATH=" + std::string(FAKE_CUPTI_LIB),
          "GPUSPY_COLLECTOR=" + collector,
          "GPUSPY_JOB=" + job,
          "GPUSPY_FLUSH_MS=20",
          "GPUSPY_SPILL_DIR=" + spill_dir,
          "GPUSPY_LOG=info"};
}

int Produced(const nlohmann::json& expect) {
  int n = 0;
  for (const char* k : kKinds) n += expect.value(k, 0);
  return n;
}

void ExpectAccountedFor(const nlohmann::json& expect, const CollectedProcess& got) {
  const int produced = Produced(expect);
  ASSERT_GT(produced, 0) << "the program wrote no --expect file";
  EXPECT_EQ(static_cast<uint64_t>(got.events) + got.dropped(), static_cast<uint64_t>(produced))
      << "stored " << got.events << ", reported dropped " << got.dropped();
  const auto& ids = got.api_correlation_ids;
  EXPECT_TRUE(std::adjacent_find(ids.begin(), ids.end()) == ids.end()) << "an API call stored twice";
  const uint64_t last = expect.value("last_correlation_id", 0u);
  if (!ids.empty()) {
    EXPECT_LE(ids.back(), last);
  }
  if (got.dropped() > 0) return;
  for (const char* k : kKinds) {
    auto it = got.by_kind.find(k);
    EXPECT_EQ(it == got.by_kind.end() ? 0 : it->second, expect.value(k, 0)) << k;
  }
  // Every CUDA call the program made (correlation ids 1..N), each exactly once.
  ASSERT_EQ(ids.size(), last);
  for (uint64_t i = 0; i < ids.size(); ++i) {
    if (ids[i] != i + 1) {
      ADD_FAILURE() << "API call " << i + 1 << " missing";
      break;
    }
  }
  const int steps = expect.value("steps", 0);
  for (int s = 0; s < steps; ++s) {
    auto it = got.nvtx_ranges.find("ProfilerStep#" + std::to_string(s));
    EXPECT_EQ(it == got.nvtx_ranges.end() ? 0 : it->second, 1) << "ProfilerStep#" << s;
  }
}

uint64_t CollectedProcess::dropped() const {
  return info.loss().cupti_dropped_records() + info.loss().queue_dropped_events() +
         info.loss().spill_dropped_events();
}

std::map<uint64_t, CollectedProcess> CollectJob(const std::string& address, const std::string& job,
                                                bool events) {
  auto stub = QueryStub(address);
  std::map<uint64_t, CollectedProcess> out;
  {
    grpc::ClientContext ctx;
    v1::ListJobsResponse jobs;
    grpc::Status st = stub->ListJobs(&ctx, {}, &jobs);
    EXPECT_TRUE(st.ok()) << st.error_message();
    for (const auto& j : jobs.jobs()) {
      if (j.job_id() != job) continue;
      for (const auto& p : j.processes()) {
        out[p.process_id()].process_id = p.process_id();
        out[p.process_id()].info = p;
      }
    }
  }
  if (out.empty() || !events) return out;
  v1::GetEventsRequest req;
  req.set_job_id(job);
  req.set_limit(5'000'000);
  v1::GetEventsResponse resp;
  grpc::Status st = gpuspy::testing::GetAllEvents(stub.get(), req, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_FALSE(resp.truncated());
  for (const auto& pe : resp.processes()) {
    CollectedProcess& p = out[pe.process_id()];
    for (const auto& e : pe.events()) {
      ++p.events;
      switch (e.kind_case()) {
        case v1::Event::kKernel:
          p.by_kind["kernels"]++;
          p.kernel_correlation_ids.push_back(e.kernel().correlation_id());
          break;
        case v1::Event::kApi:
          p.by_kind[e.api().domain() == v1::API_DOMAIN_DRIVER ? "driver_api" : "runtime_api"]++;
          p.api_correlation_ids.push_back(e.api().correlation_id());
          break;
        case v1::Event::kMemcpy: p.by_kind["memcpy"]++; break;
        case v1::Event::kMemset: p.by_kind["memset"]++; break;
        case v1::Event::kSync: p.by_kind["sync"]++; break;
        case v1::Event::kMemory:
          p.by_kind[e.memory().op() == v1::MEMORY_OP_ALLOC ? "alloc" : "free"]++;
          break;
        case v1::Event::kNvtxRange:
          p.by_kind["nvtx_ranges"]++;
          p.nvtx_ranges[e.nvtx_range().message()]++;
          break;
        case v1::Event::kNvtxMark: p.by_kind["nvtx_marks"]++; break;
        case v1::Event::kExternalCorrelation: p.by_kind["external_correlations"]++; break;
        case v1::Event::kMemoryPool: p.by_kind["memory_pools"]++; break;
        case v1::Event::kGraphLaunch: p.by_kind["graph_launches"]++; break;
        default: p.by_kind["other"]++; break;
      }
    }
    std::sort(p.api_correlation_ids.begin(), p.api_correlation_ids.end());
    std::sort(p.kernel_correlation_ids.begin(), p.kernel_correlation_ids.end());
  }
  return out;
}

v1::CollectorStats CollectorStats(const std::string& address) {
  auto stub = QueryStub(address);
  grpc::ClientContext ctx;
  v1::GetStatsResponse resp;
  grpc::Status st = stub->GetStats(&ctx, {}, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  return resp.stats();
}

std::vector<v1::StepReport> StepReports(const std::string& address, const std::string& job) {
  auto stub = QueryStub(address);
  grpc::ClientContext ctx;
  v1::GetStepReportRequest req;
  req.set_job_id(job);
  req.set_all(true);
  v1::GetStepReportResponse resp;
  grpc::Status st = stub->GetStepReport(&ctx, req, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  return {resp.reports().begin(), resp.reports().end()};
}

nlohmann::json ReadJson(const std::string& path) {
  const std::string text = ReadFile(path);
  if (text.empty()) return nlohmann::json::object();
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

StepTimes Summarize(std::vector<int64_t> step_us) {
  StepTimes t;
  if (step_us.empty()) return t;
  std::sort(step_us.begin(), step_us.end());
  t.steps = step_us.size();
  t.median_us = static_cast<double>(step_us[step_us.size() / 2]);
  t.p90_us = static_cast<double>(step_us[step_us.size() * 9 / 10]);
  t.max_us = static_cast<double>(step_us.back());
  return t;
}

void Record(const std::string& line) {
  std::printf("[figures] %s\n", line.c_str());
  std::fflush(stdout);
  if (const char* path = std::getenv("GPUSPY_RESULTS_FILE"); path != nullptr && *path != '\0') {
    std::ofstream(path, std::ios::app) << line << "\n";
  }
}

uint64_t TestSeed(uint64_t fallback) {
  uint64_t seed = fallback;
  if (const char* s = std::getenv("GPUSPY_TEST_SEED"); s != nullptr && *s != '\0') {
    seed = std::strtoull(s, nullptr, 10);
  }
  std::printf("seed %llu (GPUSPY_TEST_SEED=%llu reproduces this run)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  return seed;
}

// rank -> events, from gpuspy-replay's "rank R: N events in B batches" lines.
std::map<int, uint64_t> ReplayedEvents(const std::string& out) {
  std::map<int, uint64_t> events;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    int rank = 0;
    unsigned long long n = 0;
    if (std::sscanf(line.c_str(), "rank %d: %llu events", &rank, &n) == 2) events[rank] = n;
  }
  return events;
}

}  // namespace gpuspy::testing
