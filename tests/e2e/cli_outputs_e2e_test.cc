// The CLI's other outputs (issue 35): --csv gives the JSON's numbers as CSV and refuses --json;
// a piped run never gets a progress line; the bash completion is valid bash and completes the job
// names a running gpuspyd holds.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

std::string Trace(const char* name) {
  return std::string(SOURCE_DIR) + "/../shared/traces/" + name;
}

// RFC 4180 as read back (what Python's csv module does): quoted fields, doubled quotes, CRLF.
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(std::move(field));
      field.clear();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.back().push_back(std::move(field));
      field.clear();
      rows.emplace_back();
      ++i;
    } else {
      field += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

size_t Column(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return i;
  }
  ADD_FAILURE() << "no column " << name;
  return 0;
}

// proto JSON writes 64-bit integers as strings and leaves zeros out.
std::string Int(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) return "0";
  return j[key].is_string() ? j[key].get<std::string>() : std::to_string(j[key].get<int64_t>());
}

TEST(CliOutputs, AnalyzeCsvHasTheJsonNumbersStepByStep) {
  const std::string file = Trace("nccl_a100.json.gz");
  ASSERT_TRUE(std::filesystem::exists(file)) << file << " (the shared real traces) is missing";
  testing::RunResult csv = testing::Run({GPUSPY_BIN, "--csv", "analyze", file});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  testing::RunResult json = testing::Run({GPUSPY_BIN, "--json", "analyze", file});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto rows = ParseCsv(csv.out);
  const auto reports = nlohmann::json::parse(json.out)["reports"]["reports"];
  ASSERT_FALSE(reports.empty());
  ASSERT_EQ(rows.size(), reports.size() + 1) << csv.out;
  const auto& header = rows[0];
  EXPECT_EQ(header[0], "rank");
  for (size_t i = 0; i < reports.size(); ++i) {
    const auto& r = reports[i];
    const auto& row = rows[i + 1];
    ASSERT_EQ(row.size(), header.size()) << "row " << i;
    EXPECT_EQ(row[Column(header, "number")], Int(r["step"], "number"));
    EXPECT_EQ(row[Column(header, "wall_ns")], Int(r["breakdown"], "wall_ns"));
    EXPECT_EQ(row[Column(header, "gpu_busy_ns")], Int(r["breakdown"], "gpu_busy_ns"));
    EXPECT_EQ(row[Column(header, "kind")], r.value("kind", std::string("STEP_KIND_UNSPECIFIED")));
    EXPECT_EQ(row[Column(header, "primary_bottleneck")], r.value("primary_bottleneck", std::string()));
  }
}

TEST(CliOutputs, CsvAndJsonExcludeEachOtherInOneLine) {
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{GPUSPY_BIN, "--csv", "--json", "analyze", Trace("nccl_a100.json.gz")},
        std::vector<std::string>{GPUSPY_BIN, "--json", "report", "--job", "x", "--csv"}}) {
    testing::RunResult r = testing::Run(argv);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--csv and --json exclude each other"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  testing::RunResult jobs = testing::Run({GPUSPY_BIN, "--csv", "jobs"});
  EXPECT_EQ(jobs.exit_code, 2);
  EXPECT_NE(jobs.err.find("gpuspy jobs: --csv is for report, summary and analyze"), std::string::npos)
      << jobs.err;
}

class WithImportedJobs : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start()) << daemon_.log();
    for (const char* job : {"alpha-run", "beta-run"}) {
      const std::string file = Trace(std::string(job) == "alpha-run" ? "nccl_a100.json.gz" : "alexnet_a100.json.gz");
      ASSERT_TRUE(std::filesystem::exists(file)) << file << " (the shared real traces) is missing";
      testing::RunResult r = testing::Run({GPUSPY_BIN, "--collector", daemon_.address(), "import", "--job", job, file});
      ASSERT_EQ(r.exit_code, 0) << r.err;
      // Piped: no progress line, whatever the size.
      EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("importing "), std::string::npos) << r.err;
    }
  }

  testing::TempDir dir_;
  testing::Gpuspyd daemon_{{.binary = GPUSPYD_BIN, .dir = dir_.path()}};
};

TEST_F(WithImportedJobs, ReportAndSummaryCsvAgreeWithJson) {
  const std::string at = daemon_.address();
  testing::RunResult csv = testing::Run({GPUSPY_BIN, "--collector", at, "--csv", "report", "--job", "alpha-run", "--all"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  testing::RunResult json = testing::Run({GPUSPY_BIN, "--collector", at, "--json", "report", "--job", "alpha-run", "--all"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto reports = nlohmann::json::parse(json.out)["reports"];
  const auto rows = ParseCsv(csv.out);
  ASSERT_EQ(rows.size(), reports.size() + 1) << csv.out;
  EXPECT_EQ(rows[1][Column(rows[0], "wall_ns")], Int(reports[0]["breakdown"], "wall_ns"));

  testing::RunResult sum_csv = testing::Run({GPUSPY_BIN, "--collector", at, "--csv", "summary", "--job", "alpha-run"});
  ASSERT_EQ(sum_csv.exit_code, 0) << sum_csv.err;
  testing::RunResult sum_json = testing::Run({GPUSPY_BIN, "--collector", at, "--json", "summary", "--job", "alpha-run"});
  const auto summary = nlohmann::json::parse(sum_json.out)["summary"];
  const auto srows = ParseCsv(sum_csv.out);
  const size_t findings = summary.value("findings", nlohmann::json::array()).size();
  ASSERT_EQ(srows.size(), 1 + std::max<size_t>(findings, 1)) << sum_csv.out;
  EXPECT_EQ(srows[1][Column(srows[0], "job_id")], "alpha-run");
  EXPECT_EQ(srows[1][Column(srows[0], "median_step_wall_ns")], Int(summary, "median_step_wall_ns"));
  if (findings > 0) {
    EXPECT_EQ(srows[1][Column(srows[0], "detector")], summary["findings"][0]["detector"].get<std::string>());
    EXPECT_EQ(srows[1][Column(srows[0], "lost_per_step_ns")], Int(summary["findings"][0], "lost_per_step_ns"));
  }
}

TEST_F(WithImportedJobs, PipedExportAndAnalyzeShowNoProgress) {
  testing::RunResult exp = testing::Run({GPUSPY_BIN, "--collector", daemon_.address(), "export", "--job",
                                         "alpha-run", "-o", dir_.path() + "/out.json"});
  ASSERT_EQ(exp.exit_code, 0) << exp.err;
  EXPECT_EQ(exp.err.find('\r'), std::string::npos) << exp.err;
  EXPECT_EQ(exp.err.find("exporting job"), std::string::npos) << exp.err;
  testing::RunResult an = testing::Run({GPUSPY_BIN, "analyze", Trace("nccl_a100.json.gz")});
  ASSERT_EQ(an.exit_code, 0) << an.err;
  EXPECT_EQ(an.err.find('\r'), std::string::npos) << an.err;
  EXPECT_EQ(an.err.find("reading "), std::string::npos) << an.err;
}

// Completes the words with the script of `gpuspy completion bash`, as bash does on TAB.
std::vector<std::string> Complete(const std::string& script, const std::vector<std::string>& words) {
  std::string array;
  for (const std::string& w : words) array += " '" + w + "'";
  const std::string line = "source '" + script + "'; COMP_WORDS=(" + array + "); COMP_CWORD=" +
                           std::to_string(words.size() - 1) + "; _gpuspy; printf '%s\\n' \"${COMPREPLY[@]}\"";
  testing::RunResult r = testing::Run({"/bin/bash", "-c", line});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;  // a completion never prints errors
  std::vector<std::string> out;
  std::string word;
  for (char c : r.out) {
    if (c == '\n') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  return out;
}

TEST_F(WithImportedJobs, BashCompletionIsValidAndCompletesJobNames) {
  testing::RunResult script = testing::Run({GPUSPY_BIN, "completion", "bash"});
  ASSERT_EQ(script.exit_code, 0) << script.err;
  const std::string path = dir_.path() + "/gpuspy.bash";
  std::ofstream(path) << script.out;
  testing::RunResult syntax = testing::Run({"/bin/bash", "-n", path});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  EXPECT_EQ(script.out.find("--names"), script.out.rfind("--names")) << "the hidden flag is no completion";

  const std::string at = daemon_.address();
  using V = std::vector<std::string>;
  EXPECT_EQ(Complete(path, {GPUSPY_BIN, "--collector", at, "report", "--job", ""}), (V{"alpha-run", "beta-run"}));
  EXPECT_EQ(Complete(path, {GPUSPY_BIN, "--collector", at, "summary", "--job", "be"}), (V{"beta-run"}));
  EXPECT_EQ(Complete(path, {GPUSPY_BIN, "--collector", at, "jobs", "delete", "al"}), (V{"alpha-run"}));
  // Commands and flags still complete, with --collector's value not taken for the command.
  EXPECT_EQ(Complete(path, {GPUSPY_BIN, "--collector", at, "rep"}), (V{"report"}));
  const V flags = Complete(path, {GPUSPY_BIN, "--collector", at, "report", "--ra"});
  EXPECT_NE(std::find(flags.begin(), flags.end(), "--rank"), flags.end());
  EXPECT_NE(std::find(flags.begin(), flags.end(), "--ranks"), flags.end());
  // No gpuspyd there: nothing completes, nothing is printed, the shell does not hang.
  EXPECT_EQ(Complete(path, {GPUSPY_BIN, "--collector", "127.0.0.1:1", "report", "--job", ""}), V{});
}

}  // namespace
}  // namespace gpuspy
