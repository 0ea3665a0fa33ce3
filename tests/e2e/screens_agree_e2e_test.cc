// One report, one owner: every screen shows the numbers the analysis library computed, for every
// step of every shared real trace and of the demo's scenarios. The CLI's JSON (gRPC), the HTTP
// API the web viewer reads, and the HTML report of `gpuspy analyze` agree on each step's time
// parts, its kind, its primary bottleneck and lost time, and on the job's findings and largest
// gain. (The web viewer's page is read back in tests/browser.) The parts of every step add up to
// its wall time.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using nlohmann::json;

std::string TraceDir() { return std::string(SOURCE_DIR) + "/../shared/traces"; }

// proto3 JSON writes 64-bit integers as strings and leaves zeros out.
int64_t Num(const json& j, const char* key) {
  if (!j.contains(key)) return 0;
  const json& v = j[key];
  return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>();
}

std::string Str(const json& j, const char* key) { return j.value(key, std::string()); }

// (process, step) -> the HTML report's row: kind, primary, lost, and its bar's parts.
struct HtmlRow {
  std::string kind, primary;
  int64_t lost_ns = 0;
  std::vector<std::pair<std::string, int64_t>> parts;
};

std::map<std::pair<std::string, std::string>, HtmlRow> HtmlRows(const std::string& html) {
  std::map<std::pair<std::string, std::string>, HtmlRow> rows;
  const std::regex row(
      R"re(<tr class=step data-process="(\d+)" data-step="(-?\d+)" data-kind="(\w+)" data-primary="([\w.-]*)" data-lost-ns="(-?\d+)">(.*?)</tr>)re");
  const std::regex part(R"re(<span data-cause="(\w+)" data-ns="(\d+)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), row); it != std::sregex_iterator(); ++it) {
    HtmlRow r{(*it)[3], (*it)[4], std::stoll((*it)[5]), {}};
    const std::string cells = (*it)[6];
    for (auto p = std::sregex_iterator(cells.begin(), cells.end(), part); p != std::sregex_iterator(); ++p) {
      r.parts.emplace_back((*p)[1], std::stoll((*p)[2]));
    }
    rows[{(*it)[1], (*it)[2]}] = r;
  }
  return rows;
}

std::map<std::string, int64_t> HtmlJobFindings(const std::string& html) {
  std::map<std::string, int64_t> out;
  const std::regex row(R"re(<tr data-detector="(\w+)" data-lost-per-step-ns="(-?\d+)">)re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), row); it != std::sregex_iterator(); ++it) {
    out[(*it)[1]] = std::stoll((*it)[2]);
  }
  return out;
}

class ScreensAgree : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_ = std::make_unique<testing::Gpuspyd>(
        testing::GpuspydOptions{.binary = GPUSPYD_BIN, .dir = dir_.path(), .http = true});
    ASSERT_TRUE(daemon_->Start()) << daemon_->log();
  }

  json Cli(const std::vector<std::string>& args) {
    std::vector<std::string> cmd = {GPUSPY_BIN, "--collector", daemon_->address(), "--json"};
    cmd.insert(cmd.end(), args.begin(), args.end());
    testing::RunResult r = testing::Run(cmd);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json();
  }

  json Http(const std::string& path) {
    httplib::Client http("127.0.0.1", daemon_->http_port());
    auto res = http.Get(path);
    EXPECT_TRUE(res && res->status == 200) << path;
    return res && res->status == 200 ? json::parse(res->body) : json();
  }

  // The CLI and HTTP give the same reports and summary, whose parts add up; returns them.
  std::tuple<json, json> CheckCliAndHttp(const std::string& job) {
    const json cli_reports = Cli({"report", "--job", job, "--all"});
    const json cli_summary = Cli({"summary", "--job", job});
    const json http_reports = Http("/api/jobs/" + job + "/report?all=1");
    const json http_summary = Http("/api/jobs/" + job + "/summary");
    EXPECT_EQ(cli_reports, http_reports) << json::diff(cli_reports, http_reports);
    EXPECT_EQ(cli_summary, http_summary) << json::diff(cli_summary, http_summary);
    const json reports = http_reports.value("reports", json::array());
    EXPECT_FALSE(reports.empty());
    for (const json& r : reports) {
      const json& b = r["breakdown"];
      int64_t sum = 0;
      for (const json& p : b.value("parts", json::array())) sum += Num(p, "ns");
      EXPECT_EQ(sum, Num(b, "wall_ns")) << "parts of step " << r["step"].dump();
      EXPECT_FALSE(Str(r, "kind").empty()) << r["step"].dump();
      // A fix that is a command names this job, not a placeholder.
      for (const json& f : r.value("findings", json::array())) {
        const std::string hint = Str(f, "fix_hint");
        EXPECT_EQ(hint.find("<job>"), std::string::npos) << hint;
        if (Str(f, "detector") == "straggler_wait" && hint.find("gpuspy report") != std::string::npos) {
          EXPECT_NE(hint.find("gpuspy report --job " + job + " --rank "), std::string::npos) << hint;
        }
      }
    }
    // The largest gain is the job's top finding, with the same figure.
    const json summary = http_summary.value("summary", json::object());
    if (summary.contains("largest_gain")) {
      const json& gain = summary["largest_gain"];
      bool found = false;
      for (const json& f : summary.value("findings", json::array())) {
        if (Str(f, "detector") != Str(gain, "detector")) continue;
        found = true;
        EXPECT_EQ(Num(f, "lost_per_step_ns"), Num(gain, "lost_per_step_ns")) << f.dump();
      }
      EXPECT_TRUE(found) << gain.dump();
    }
    return {reports, summary};
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::Gpuspyd> daemon_;
};

struct TraceCase {
  const char* name;
  std::vector<std::string> files;
};

class TracesAgree : public ScreensAgree, public ::testing::WithParamInterface<TraceCase> {};

TEST_P(TracesAgree, CliHttpAndHtmlReportShowTheSameNumbers) {
  std::vector<std::string> files;
  for (const std::string& f : GetParam().files) files.push_back(TraceDir() + "/" + f);
  for (const std::string& f : files) ASSERT_TRUE(std::filesystem::exists(f)) << f << " is missing";
  std::vector<std::string> import = {"import", "--job", "j"};
  import.insert(import.end(), files.begin(), files.end());
  Cli(import);
  const auto [reports, summary] = CheckCliAndHttp("j");

  const std::string html_path = dir_.path() + "/report.html";
  std::vector<std::string> analyze = {GPUSPY_BIN, "analyze", "--job", "j", "--html", html_path};
  analyze.insert(analyze.end(), files.begin(), files.end());
  testing::RunResult analyzed = testing::Run(analyze);
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
  std::ifstream in(html_path);
  std::stringstream html;
  html << in.rdbuf();
  const auto rows = HtmlRows(html.str());
  ASSERT_EQ(rows.size(), reports.size());
  for (const json& r : reports) {
    const std::string process = r["step"]["process_id"].get<std::string>();
    const std::string step = std::to_string(Num(r["step"], "number"));
    auto it = rows.find({process, step});
    ASSERT_NE(it, rows.end()) << process << "/" << step;
    EXPECT_EQ(it->second.kind, Str(r, "kind"));
    EXPECT_EQ(it->second.primary, Str(r, "primary_bottleneck"));
    const json findings = r.value("findings", json::array());
    EXPECT_EQ(it->second.lost_ns, findings.empty() ? 0 : Num(findings[0], "lost_ns"));
    std::vector<std::pair<std::string, int64_t>> parts;
    for (const json& p : r["breakdown"].value("parts", json::array())) parts.emplace_back(Str(p, "cause"), Num(p, "ns"));
    EXPECT_EQ(it->second.parts, parts) << process << "/" << step;
  }
  std::map<std::string, int64_t> findings;
  for (const json& f : summary.value("findings", json::array())) findings[Str(f, "detector")] = Num(f, "lost_per_step_ns");
  EXPECT_EQ(HtmlJobFindings(html.str()), findings);
}

INSTANTIATE_TEST_SUITE_P(
    SharedTraces, TracesAgree,
    ::testing::Values(TraceCase{"alexnet", {"alexnet_a100.json.gz"}},
                      TraceCase{"event_sync", {"event_sync_a100.json.gz"}},
                      TraceCase{"nccl", {"nccl_a100.json.gz"}},
                      TraceCase{"resnet50_2021", {"resnet50_2021_autograd_nw4.json.gz"}},
                      TraceCase{"triton", {"triton_a100.json.gz"}},
                      TraceCase{"two_ranks", {"sampled_rank-0.json.gz", "sampled_rank-1.json.gz"}}),
    [](const auto& info) { return std::string(info.param.name); });

struct ScenarioCase {
  const char* scenario;
  int ranks;
};

class ScenariosAgree : public ScreensAgree, public ::testing::WithParamInterface<ScenarioCase> {};

TEST_P(ScenariosAgree, CliAndHttpShowTheSameNumbers) {
  testing::RunResult replay = testing::Run({REPLAY_BIN, "--collector", daemon_->address(), "--job", "demo",
                                            "--scenario", GetParam().scenario, "--ranks",
                                            std::to_string(GetParam().ranks), "--steps", "8"});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  const auto [reports, summary] = CheckCliAndHttp("demo");
  EXPECT_EQ(Num(summary, "process_count"), GetParam().ranks);
  EXPECT_EQ(summary.value("ranks", json::array()).size(), static_cast<size_t>(GetParam().ranks));
}

INSTANTIATE_TEST_SUITE_P(
    DemoScenarios, ScenariosAgree,
    ::testing::Values(ScenarioCase{"healthy", 2}, ScenarioCase{"sync_stall", 2}, ScenarioCase{"launch_storm", 2},
                      ScenarioCase{"copy_heavy", 2}, ScenarioCase{"input_stall", 2}, ScenarioCase{"fp32_gemm", 2},
                      ScenarioCase{"alloc_churn", 2}, ScenarioCase{"unfused_mlp", 2},
                      ScenarioCase{"eager_attention", 2}, ScenarioCase{"memory_leak", 2},
                      ScenarioCase{"host_bound", 2}, ScenarioCase{"compiled_mlp", 2},
                      ScenarioCase{"sdpa_attention", 2}, ScenarioCase{"straggler_compute", 4},
                      ScenarioCase{"straggler_input", 4}, ScenarioCase{"exposed_comm", 4},
                      ScenarioCase{"comm_storm", 4}),
    [](const auto& info) { return std::string(info.param.scenario); });

}  // namespace
}  // namespace gpuspy
