// GET /metrics against a real gpuspyd fed by synthetic jobs: the collector's counters, per-job
// gauges with the right bottleneck, bounded labels; and a real Prometheus (Debian's `prometheus`,
// loopback only, short-lived) scraping it.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "httplib.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

// "name{labels} value" lines of the exposition, keyed by "name{labels}".
std::map<std::string, double> Samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

class MetricsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start()) << daemon_.log();
    grpc_port_ = daemon_.port();
    http_port_ = daemon_.http_port();
  }

  void Replay(const std::string& job, const std::string& scenario, int ranks) {
    ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", "127.0.0.1:" + std::to_string(grpc_port_),
                            "--job", job, "--steps", "6", "--ranks", std::to_string(ranks),
                            "--scenario", scenario})
                  .exit_code,
              0);
  }

  std::string Metrics() {
    httplib::Client c("127.0.0.1", http_port_);
    c.set_read_timeout(30, 0);
    auto r = c.Get("/metrics");
    EXPECT_TRUE(r);
    if (!r) return "";
    EXPECT_EQ(r->status, 200);
    EXPECT_NE(r->get_header_value("Content-Type").find("text/plain; version=0.0.4"), std::string::npos);
    return r->body;
  }

  testing::TempDir dir_;
  testing::Gpuspyd daemon_{{.binary = GPUSPYD_BIN, .dir = dir_.path(), .http = true}};
  int grpc_port_ = 0;
  int http_port_ = 0;
};

TEST_F(MetricsE2E, CollectorCountersAndPerJobBottlenecks) {
  Replay("copyjob", "copy_heavy", 2);
  Replay("syncjob", "sync_stall", 1);
  const std::string text = Metrics();
  const auto s = Samples(text);
  EXPECT_GT(s.at("gpuspy_ingest_events_total"), 0) << text;
  EXPECT_GT(s.at("gpuspy_ingest_batches_total{result=\"stored\"}"), 0);
  EXPECT_EQ(s.at("gpuspy_ingest_batches_total{result=\"rejected\"}"), 0);
  EXPECT_GT(s.at("gpuspy_storage_bytes"), 0);
  // Overload bounds (docs/overload.md): the defaults, and no refusal for two small jobs.
  EXPECT_EQ(s.at("gpuspy_ingest_refused_total{reason=\"streams\"}"), 0);
  EXPECT_EQ(s.at("gpuspy_ingest_refused_total{reason=\"memory\"}"), 0);
  EXPECT_EQ(s.at("gpuspy_ingest_memory_bytes{kind=\"budget\"}"), 256 << 20);
  EXPECT_GT(s.at("gpuspy_ingest_memory_bytes{kind=\"peak\"}"), 0);
  EXPECT_EQ(s.at("gpuspy_ingest_streams_max"), 1024);
  EXPECT_EQ(s.at("gpuspy_processes{state=\"disconnected\"}"), 3);
  EXPECT_EQ(s.at("gpuspy_up"), 1);
  EXPECT_EQ(s.at("gpuspy_metrics_jobs"), 2);
  // Each job's primary bottleneck is the one its scenario reproduces.
  EXPECT_EQ(s.at("gpuspy_job_primary_bottleneck{gpuspy_job=\"copyjob\",bottleneck=\"copy_dominated\"}"), 1) << text;
  EXPECT_EQ(s.at("gpuspy_job_primary_bottleneck{gpuspy_job=\"syncjob\",bottleneck=\"sync_stall\"}"), 1) << text;
  EXPECT_GT(s.at("gpuspy_job_time_lost_seconds{gpuspy_job=\"syncjob\",bottleneck=\"sync_stall\"}"), 0);
  EXPECT_GT(s.at("gpuspy_job_step_seconds{gpuspy_job=\"copyjob\"}"), 0);
  const double busy = s.at("gpuspy_job_gpu_busy_ratio{gpuspy_job=\"copyjob\"}");
  EXPECT_GT(busy, 0);
  EXPECT_LE(busy, 1);
  // Every family is declared once, and no series carries a pid or host label; only the per-rank
  // families (gpuspy_rank_*, bounded per job) carry a rank label.
  std::map<std::string, int> types;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) ++types[line.substr(7, line.find(' ', 7) - 7)];
    if (line.rfind("gpuspy_rank_", 0) != 0 && line.rfind("# ", 0) != 0) {
      EXPECT_EQ(line.find("rank="), std::string::npos) << line;
    }
    EXPECT_EQ(line.find("pid="), std::string::npos) << line;
    EXPECT_EQ(line.find("host="), std::string::npos) << line;
  }
  for (const auto& [family, n] : types) EXPECT_EQ(n, 1) << family;
}

TEST_F(MetricsE2E, ARealPrometheusScrapesIt) {
  const std::string prometheus = "/usr/bin/prometheus";
  if (access(prometheus.c_str(), X_OK) != 0) {
    GTEST_SKIP() << "prometheus is not installed (apt-get install prometheus): scrape test skipped";
  }
  Replay("scraped", "launch_storm", 1);
  const int port = testing::FreeTcpPort();
  {
    std::ofstream cfg(dir_.path() + "/prometheus.yml");
    cfg << "global:\n  scrape_interval: 1s\n"
        << "scrape_configs:\n  - job_name: gpuspyd\n    static_configs:\n"
        << "      - targets: ['127.0.0.1:" << http_port_ << "']\n";
  }
  testing::Process prom({prometheus, "--config.file=" + dir_.path() + "/prometheus.yml",
                         "--storage.tsdb.path=" + dir_.path() + "/tsdb",
                         "--web.listen-address=127.0.0.1:" + std::to_string(port)},
                        dir_.path() + "/prometheus.log");
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  double events = 0;
  std::string bottleneck;
  for (int i = 0; i < 120 && (events == 0 || bottleneck.empty()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    auto r = c.Get("/api/v1/query?query=gpuspy_ingest_events_total");
    if (!r || r->status != 200) continue;
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_discarded() || j["data"]["result"].empty()) continue;
    events = std::stod(j["data"]["result"][0]["value"][1].get<std::string>());
    auto b = c.Get("/api/v1/query?query=gpuspy_job_primary_bottleneck%3D%3D1");
    if (!b || b->status != 200) continue;
    auto bj = nlohmann::json::parse(b->body, nullptr, false);
    if (!bj.is_discarded() && !bj["data"]["result"].empty()) {
      bottleneck = bj["data"]["result"][0]["metric"]["bottleneck"].get<std::string>();
    }
  }
  EXPECT_GT(events, 0) << testing::ReadFile(dir_.path() + "/prometheus.log");
  EXPECT_EQ(bottleneck, "launch_storm");
  // Prometheus says the target is healthy.
  auto targets = c.Get("/api/v1/targets");
  ASSERT_TRUE(targets);
  auto t = nlohmann::json::parse(targets->body);
  ASSERT_FALSE(t["data"]["activeTargets"].empty());
  EXPECT_EQ(t["data"]["activeTargets"][0]["health"], "up") << targets->body;
}

}  // namespace
}  // namespace gpuspy
