// `gpuspy analyze` (no daemon) against `gpuspy import` into a real gpuspyd: the same trace files
// give the same per-step reports and job summary, JSON for JSON. And analyze's own promises:
// it needs no gpuspyd, writes its Perfetto and HTML outputs, and says what is wrong with a bad
// file (one line naming it, exit 1; the good files' results with --keep-going).
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

std::string TraceDir() { return std::string(SOURCE_DIR) + "/../shared/traces"; }

struct Case {
  const char* name;
  std::vector<std::string> files;  // one job's ranks
};

class AnalyzeMatchesCollector : public ::testing::TestWithParam<Case> {};

TEST_P(AnalyzeMatchesCollector, SameReportsAndSummaryAsImportIntoGpuspyd) {
  std::vector<std::string> files;
  for (const std::string& f : GetParam().files) {
    files.push_back(TraceDir() + "/" + f);
    if (!std::filesystem::exists(files.back())) GTEST_SKIP() << files.back() << " not present";
  }
  testing::TempDir dir;
  testing::Gpuspyd daemon({.binary = GPUSPYD_BIN, .dir = dir.path()});
  ASSERT_TRUE(daemon.Start()) << daemon.log();
  const std::string address = daemon.address();

  std::vector<std::string> import = {GPUSPY_BIN, "--collector", address, "import", "--job", "j"};
  import.insert(import.end(), files.begin(), files.end());
  testing::RunResult imported = testing::Run(import);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  testing::RunResult report = testing::Run(
      {GPUSPY_BIN, "--collector", address, "--json", "report", "--job", "j", "--all"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  testing::RunResult summary =
      testing::Run({GPUSPY_BIN, "--collector", address, "--json", "summary", "--job", "j"});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;

  // No collector at this address: analyze must not need one.
  std::vector<std::string> analyze = {GPUSPY_BIN, "--collector", "127.0.0.1:1", "--json",
                                      "analyze", "--job", "j"};
  analyze.insert(analyze.end(), files.begin(), files.end());
  testing::RunResult offline = testing::Run(analyze);
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  const auto got = nlohmann::json::parse(offline.out);
  const auto want_reports = nlohmann::json::parse(report.out);
  ASSERT_FALSE(want_reports.value("reports", nlohmann::json::array()).empty());
  EXPECT_EQ(got["reports"], want_reports) << nlohmann::json::diff(got["reports"], want_reports);
  const auto want_summary = nlohmann::json::parse(summary.out);
  EXPECT_EQ(got["summary"], want_summary) << nlohmann::json::diff(got["summary"], want_summary);

  // import --offline is the same command.
  std::vector<std::string> offline_import = {GPUSPY_BIN, "--json", "import", "--offline",
                                             "--job", "j"};
  offline_import.insert(offline_import.end(), files.begin(), files.end());
  testing::RunResult again = testing::Run(offline_import);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out), got);
}

INSTANTIATE_TEST_SUITE_P(
    RealTraces, AnalyzeMatchesCollector,
    ::testing::Values(Case{"nccl", {"nccl_a100.json.gz"}},
                      Case{"alexnet", {"alexnet_a100.json.gz"}},
                      Case{"two_ranks", {"sampled_rank-0.json.gz", "sampled_rank-1.json.gz"}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(AnalyzeE2E, WritesPerfettoAndHtml) {
  const std::string file = TraceDir() + "/nccl_a100.json.gz";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " not present";
  testing::TempDir dir;
  testing::RunResult r = testing::Run({GPUSPY_BIN, "analyze", file, "--export", "perfetto",
                                       dir.path() + "/out.json", "--html",
                                       dir.path() + "/report.html"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("PRIMARY BOTTLENECK"), std::string::npos) << r.out;
  const auto trace = nlohmann::json::parse(testing::ReadFile(dir.path() + "/out.json"));
  EXPECT_GT(trace["traceEvents"].size(), 1000u);
  // Nothing is written silently: each output is named on stderr with its size.
  EXPECT_NE(r.err.find("gpuspy analyze: wrote " + dir.path() + "/out.json ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" trace events from 1 process, "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gpuspy analyze: wrote " + dir.path() + "/report.html ("), std::string::npos) << r.err;
  // The same layout as gpuspyd's export: steps and findings on their track, host threads named.
  std::set<std::string> categories, thread_names;
  for (const auto& e : trace["traceEvents"]) {
    if (e.contains("cat")) categories.insert(e["cat"].get<std::string>());
    if (e["ph"] == "M" && e["name"] == "thread_name") thread_names.insert(e["args"]["name"].get<std::string>());
  }
  EXPECT_TRUE(categories.contains("gpuspy_step")) << r.err;
  EXPECT_TRUE(categories.contains("gpuspy_finding")) << r.err;
  EXPECT_TRUE(thread_names.contains("gpuspy steps"));
  EXPECT_TRUE(std::any_of(thread_names.begin(), thread_names.end(),
                          [](const std::string& n) { return n.rfind("thread ", 0) == 0 || n.rfind("main thread ", 0) == 0; }))
      << "host threads carry names";
  const std::string html = testing::ReadFile(dir.path() + "/report.html");
  EXPECT_NE(html.find("<h2>Steps</h2>"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"#s1-"), std::string::npos);  // a row per step, linked
  EXPECT_NE(html.find("<h2>Findings</h2>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);       // static: nothing runs
}

TEST(AnalyzeE2E, AnOutputThatCannotBeWrittenSaysWhy) {
  const std::string file = TraceDir() + "/alexnet_a100.json.gz";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " not present";
  for (const char* flag : {"--html", "--export"}) {
    std::vector<std::string> argv = {GPUSPY_BIN, "analyze", file, flag};
    if (std::string(flag) == "--export") argv.push_back("perfetto");
    argv.push_back("/nonexistent-dir/out.json");
    testing::RunResult r = testing::Run(argv);
    EXPECT_EQ(r.exit_code, 1) << flag;
    EXPECT_NE(r.err.find("cannot write /nonexistent-dir/out.json: No such file or directory"),
              std::string::npos)
        << flag << ": " << r.err;
  }
}

// A named pipe with no writer (or any file that is not a regular one) is refused at once: it
// used to block analyze in open() forever.
TEST(AnalyzeE2E, AFifoIsRefusedInsteadOfWaitedOn) {
  testing::TempDir dir;
  const std::string fifo = dir.path() + "/trace.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const char* command : {"analyze", "import"}) {
    std::vector<std::string> argv = {GPUSPY_BIN, "--collector", "127.0.0.1:1", command, fifo};
    testing::RunResult r = testing::Run(argv, {}, std::chrono::seconds(20));
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
    EXPECT_NE(r.err.find(fifo + ": not a regular file"), std::string::npos) << command << ": " << r.err;
  }
}

TEST(AnalyzeE2E, ABadFileIsOneLineWithItsNameAndKeepGoingAnalysesTheRest) {
  const std::string good = TraceDir() + "/alexnet_a100.json.gz";
  if (!std::filesystem::exists(good)) GTEST_SKIP() << good << " not present";
  testing::TempDir dir;
  const std::string bad = dir.path() + "/bad.json";
  std::ofstream(bad) << "{\"traceEvents\": [ {\"ph\": ";
  testing::RunResult stop = testing::Run({GPUSPY_BIN, "analyze", good, bad});
  EXPECT_EQ(stop.exit_code, 1);
  EXPECT_EQ(stop.err.find("gpuspy analyze: " + bad + ": not valid trace JSON at byte"), 0u)
      << stop.err;
  EXPECT_EQ(std::count(stop.err.begin(), stop.err.end(), '\n'), 1) << stop.err;
  EXPECT_TRUE(stop.out.empty()) << stop.out;

  testing::RunResult partial =
      testing::Run({GPUSPY_BIN, "--json", "analyze", "--keep-going", good, bad});
  EXPECT_EQ(partial.exit_code, 1);
  const auto got = nlohmann::json::parse(partial.out);
  EXPECT_EQ(got["summary"]["summary"]["process_count"], "1");  // uint64: a string in proto JSON

  const std::string cut = dir.path() + "/cut.json.gz";
  const std::string bytes = testing::ReadFile(good);
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  testing::RunResult truncated = testing::Run({GPUSPY_BIN, "analyze", cut});
  EXPECT_EQ(truncated.exit_code, 1);
  EXPECT_NE(truncated.err.find(cut + ": truncated or corrupt gzip stream"), std::string::npos)
      << truncated.err;
}

// Two single-process runs that both say rank 0 (alexnet and event_sync: distributedInfo rank 0
// each) are two jobs, not one job with two rank 0s: analyze refuses the second file, import the
// whole command, each in one line naming both files.
TEST(AnalyzeE2E, TwoFilesOfTheSameRankAreRefusedNotMergedIntoOneJob) {
  const std::string a = TraceDir() + "/alexnet_a100.json.gz";
  const std::string b = TraceDir() + "/event_sync_a100.json.gz";
  ASSERT_TRUE(std::filesystem::exists(a) && std::filesystem::exists(b));
  const std::string said = a + " and " + b + " are both rank 0: the files of one job are its ranks";
  testing::RunResult analyzed = testing::Run({GPUSPY_BIN, "analyze", a, b});
  EXPECT_EQ(analyzed.exit_code, 1);
  EXPECT_EQ(analyzed.err.find("gpuspy analyze: " + said), 0u) << analyzed.err;
  EXPECT_EQ(std::count(analyzed.err.begin(), analyzed.err.end(), '\n'), 1) << analyzed.err;
  // No collector at this address: the files are refused before anything is sent.
  testing::RunResult imported = testing::Run({GPUSPY_BIN, "--collector", "127.0.0.1:1", "import", a, b});
  EXPECT_EQ(imported.exit_code, 2);
  EXPECT_EQ(imported.err.find("gpuspy import: " + said), 0u) << imported.err;
  EXPECT_NE(imported.err.find("nothing imported"), std::string::npos) << imported.err;
}


// A minimal Kineto trace of one process (`pid`) that says no rank: one launch and its kernel at
// `ts_us` (absolute microseconds, as PyTorch writes them).
std::string UnrankedTrace(const std::string& path, int pid, int64_t ts_us) {
  const std::string ts = std::to_string(ts_us), kts = std::to_string(ts_us + 10);
  std::ofstream(path) << R"({"traceEvents": [
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": )" << pid
                      << R"(, "tid": 1, "ts": )" << ts << R"(, "dur": 5, "args": {"correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" << kts
                      << R"(, "dur": 20, "args": {"correlation": 1, "stream": 7, "device": 0}}]})";
  return path;
}

// Files that say no rank are numbered by position, which only holds for ranks of one run: one
// process traced twice, or two runs hours apart, are refused (analyze the file, import all).
TEST(AnalyzeE2E, UnrankedFilesOfTwoRunsAreRefusedNotNumbered) {
  testing::TempDir dir;
  constexpr int64_t kT0 = 1700000000000000;  // 2023, in microseconds
  const std::string a = UnrankedTrace(dir.path() + "/a.json", 4242, kT0);
  const std::string same_pid = UnrankedTrace(dir.path() + "/b.json", 4242, kT0 + 100);
  const std::string later = UnrankedTrace(dir.path() + "/c.json", 4343, kT0 + 2LL * 3600 * 1000000);
  const std::string peer = UnrankedTrace(dir.path() + "/d.json", 4343, kT0 + 50);
  struct Refusal {
    std::string second;
    std::string why;
  };
  for (const Refusal& r : {Refusal{same_pid, "say no rank and are the same process (pid 4242) twice"},
                           Refusal{later, "say no rank and were recorded 2.0 h apart"}}) {
    testing::RunResult analyzed = testing::Run({GPUSPY_BIN, "analyze", a, r.second});
    EXPECT_EQ(analyzed.exit_code, 1);
    EXPECT_EQ(analyzed.err.find("gpuspy analyze: " + a + " and " + r.second + " " + r.why), 0u)
        << analyzed.err;
    testing::RunResult imported =
        testing::Run({GPUSPY_BIN, "--collector", "127.0.0.1:1", "import", a, r.second});
    EXPECT_EQ(imported.exit_code, 2);
    EXPECT_NE(imported.err.find(r.why), std::string::npos) << imported.err;
    EXPECT_NE(imported.err.find("nothing imported"), std::string::npos) << imported.err;
  }
  // Near miss: another process over the same time is rank 1 of the same job.
  testing::RunResult together = testing::Run({GPUSPY_BIN, "--json", "analyze", a, peer});
  EXPECT_EQ(together.exit_code, 0) << together.err;
  EXPECT_EQ(nlohmann::json::parse(together.out)["summary"]["summary"]["process_count"], "2");
}

}  // namespace
}  // namespace gpuspy
