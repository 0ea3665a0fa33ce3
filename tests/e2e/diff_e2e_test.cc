// `gpuspy diff` end to end on the shared real traces: the two ranks of one job compared from the
// files (no gpuspyd) and from the same files imported into gpuspyd, over gRPC and over HTTP,
// give the same diff; the contributions add up to the change of the mean step; and bad sides get
// one line and a non-zero exit.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "httplib.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

std::string TraceDir() { return std::string(SOURCE_DIR) + "/../shared/traces"; }

// The diff without its labels, which name the sides as each path gave them.
nlohmann::json Unlabelled(nlohmann::json d) {
  d.erase("a_label");
  d.erase("b_label");
  return d;
}

int64_t Int(const nlohmann::json& v) {
  // proto3 JSON writes int64 as strings.
  return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>();
}

class DiffE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* f : {"sampled_rank-0.json.gz", "sampled_rank-1.json.gz"}) {
      const std::string path = TraceDir() + "/" + f;
      if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
      // One directory holds the job's two ranks (a side of a diff can be a directory).
      std::filesystem::create_symlink(path, run_dir_ + "/" + f);
      files_.push_back(path);
    }
  }
  testing::TempDir dir_;
  std::string run_dir_ = [this] {
    std::filesystem::create_directories(dir_.path() + "/run");
    return dir_.path() + "/run";
  }();
  std::vector<std::string> files_;
};

TEST_F(DiffE2E, FilesGpuspydAndHttpGiveTheSameDiffOfTwoRanks) {
  testing::Gpuspyd d({.binary = GPUSPYD_BIN, .dir = dir_.path(), .http = true});
  ASSERT_TRUE(d.Start()) << d.log();
  std::vector<std::string> import = {GPUSPY_BIN, "--collector", d.address(), "import", "--job", "j"};
  import.insert(import.end(), files_.begin(), files_.end());
  testing::RunResult imported = testing::Run(import);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;

  testing::RunResult live = testing::Run(
      {GPUSPY_BIN, "--collector", d.address(), "--json", "diff", "j@0", "j@1"});
  ASSERT_EQ(live.exit_code, 0) << live.err;
  // No collector at this address: files need none.
  testing::RunResult offline = testing::Run(
      {GPUSPY_BIN, "--collector", "127.0.0.1:1", "--json", "diff", run_dir_ + "@0", run_dir_ + "@1"});
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  const auto got = nlohmann::json::parse(offline.out);
  const auto want = nlohmann::json::parse(live.out);
  EXPECT_EQ(Unlabelled(got), Unlabelled(want)) << nlohmann::json::diff(got, want);
  EXPECT_EQ(want["a_label"], "j@0");

  httplib::Client c("127.0.0.1", d.http_port());
  auto res = c.Get("/api/diff?a=j%400&b=j%401");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(nlohmann::json::parse(res->body), want);

  // The explanation adds up, "other" included.
  int64_t sum = 0;
  ASSERT_FALSE(want["contributions"].empty());
  for (const auto& c : want["contributions"]) sum += Int(c.value("delta_ns", nlohmann::json(0)));
  EXPECT_EQ(sum, Int(want.value("mean_delta_ns", nlohmann::json(0))));
  EXPECT_EQ(want["contributions"].back()["kind"], "other");

  // The text form says who is slower and what changed.
  testing::RunResult text =
      testing::Run({GPUSPY_BIN, "--collector", d.address(), "diff", "j@0", "j@1"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("WHERE THE STEP GOES"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("WHAT CHANGED"), std::string::npos) << text.out;

  // Bad sides: a rank the job lacks, a reversed range, an unknown job, an unknown parameter.
  testing::RunResult no_rank =
      testing::Run({GPUSPY_BIN, "--collector", d.address(), "diff", "j@0", "j@7"});
  EXPECT_EQ(no_rank.exit_code, 1);
  EXPECT_NE(no_rank.err.find("has no rank 7 (ranks: 0, 1)"), std::string::npos) << no_rank.err;
  auto bad = c.Get("/api/diff?a=j:9-3&b=j");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("reversed"), std::string::npos) << bad->body;
  auto unknown = c.Get("/api/diff?a=nope&b=j");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404) << unknown->body;
  auto extra = c.Get("/api/diff?a=j&b=j&rank=1");
  ASSERT_TRUE(extra);
  EXPECT_EQ(extra->status, 400) << extra->body;

  // --rank wherever --process is taken: steps, events, export (report has it too).
  testing::RunResult steps1 = testing::Run(
      {GPUSPY_BIN, "--collector", d.address(), "--json", "steps", "--job", "j", "--rank", "1"});
  ASSERT_EQ(steps1.exit_code, 0) << steps1.err;
  const auto listed = nlohmann::json::parse(steps1.out)["steps"];
  ASSERT_FALSE(listed.empty());
  for (const auto& s : listed) EXPECT_EQ(s["process_id"], listed[0]["process_id"]);
  testing::RunResult all_steps =
      testing::Run({GPUSPY_BIN, "--collector", d.address(), "--json", "steps", "--job", "j"});
  EXPECT_GT(nlohmann::json::parse(all_steps.out)["steps"].size(), listed.size());
  for (const char* cmd : {"steps", "events", "export"}) {
    std::vector<std::string> argv = {GPUSPY_BIN, "--collector", d.address(), cmd, "--job", "j",
                                     "--rank", "7"};
    if (std::string(cmd) == "export") {
      argv.push_back("-o");
      argv.push_back(dir_.path() + "/x.json");
    }
    testing::RunResult missing = testing::Run(argv);
    EXPECT_EQ(missing.exit_code, 1) << cmd;
    EXPECT_NE(missing.err.find("has no rank 7"), std::string::npos) << cmd << ": " << missing.err;
  }
  testing::RunResult both = testing::Run({GPUSPY_BIN, "--collector", d.address(), "steps", "--job",
                                          "j", "--rank", "1", "--process", "1"});
  EXPECT_EQ(both.exit_code, 2) << both.err;

  // Step ranges narrow a side, in gpuspyd as in files.
  testing::RunResult ranged = testing::Run(
      {GPUSPY_BIN, "--collector", d.address(), "--json", "diff", "j@0:551", "j@1:552-"});
  ASSERT_EQ(ranged.exit_code, 0) << ranged.err;
  const auto r = nlohmann::json::parse(ranged.out);
  EXPECT_EQ(r["a_label"], "j@0:551-551");
  EXPECT_EQ(r["a"]["steps"], 1);
  EXPECT_EQ(r["b"]["steps"], 1);
  testing::RunResult none =
      testing::Run({GPUSPY_BIN, "--collector", d.address(), "diff", "j@0:900", "j@1"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no steps in j@0:900-900"), std::string::npos) << none.err;

  // The CLI pointed at the HTTP port says which port it should have been given.
  testing::RunResult http = testing::Run({GPUSPY_BIN, "--collector",
                                          "127.0.0.1:" + std::to_string(d.http_port()), "diff",
                                          "j@0", "j@1"});
  EXPECT_EQ(http.exit_code, 1);
  EXPECT_NE(http.err.find("is an HTTP port (gpuspyd's --http"), std::string::npos) << http.err;
}

TEST_F(DiffE2E, AnalyzeHtmlComparesTheRanksTheSummaryPicks) {
  const std::string html_path = dir_.path() + "/report.html";
  testing::RunResult r = testing::Run({GPUSPY_BIN, "--json", "analyze", "--job", "run",
                                       files_[0], files_[1], "--html", html_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto pair = nlohmann::json::parse(r.out)["summary"]["summary"]["compare_ranks"];
  ASSERT_TRUE(pair.is_object()) << r.out.substr(0, 400);
  const std::string a = "run@" + std::to_string(pair.value("a", 0));
  const std::string b = "run@" + std::to_string(pair.value("b", 0));
  EXPECT_NE(a, b);
  const std::string html = testing::ReadFile(html_path);
  // Headed by the ranks' numbers, not the selectors ("run@0 vs run@1" read as two runs).
  EXPECT_NE(html.find("<h2 id=ranks-compared>Ranks compared: rank " + a.substr(4) + " vs rank " +
                      b.substr(4) + "</h2>"),
            std::string::npos);
  // The section is `gpuspy diff` of those ranks: its first change is the page's first item.
  testing::RunResult d = testing::Run({GPUSPY_BIN, "--json", "diff", run_dir_ + "@" + a.substr(4),
                                       run_dir_ + "@" + b.substr(4)});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const auto first = nlohmann::json::parse(d.out)["contributions"][0];
  EXPECT_NE(html.find(first["kind"].get<std::string>()), std::string::npos);
}

TEST_F(DiffE2E, BadSidesGetOneLineAndAnExitCode) {
  testing::RunResult missing =
      testing::Run({GPUSPY_BIN, "diff", dir_.path() + "/nope.json.gz", run_dir_});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no such file or directory"), std::string::npos) << missing.err;
  testing::RunResult reversed = testing::Run({GPUSPY_BIN, "diff", run_dir_ + ":9-3", run_dir_});
  EXPECT_EQ(reversed.exit_code, 2);
  EXPECT_NE(reversed.err.find("reversed: did you mean 3-9?"), std::string::npos) << reversed.err;
  testing::RunResult no_rank = testing::Run({GPUSPY_BIN, "diff", run_dir_ + "@5", run_dir_});
  EXPECT_EQ(no_rank.exit_code, 1);
  EXPECT_NE(no_rank.err.find("no rank 5"), std::string::npos) << no_rank.err;
  testing::RunResult no_collector =
      testing::Run({GPUSPY_BIN, "--collector", "127.0.0.1:1", "diff", "somejob", run_dir_});
  EXPECT_EQ(no_collector.exit_code, 1);
  EXPECT_FALSE(no_collector.err.empty());
  std::filesystem::create_directories(dir_.path() + "/empty");
  testing::RunResult empty = testing::Run({GPUSPY_BIN, "diff", dir_.path() + "/empty", run_dir_});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_NE(empty.err.find("no trace files"), std::string::npos) << empty.err;
}

}  // namespace
}  // namespace gpuspy
