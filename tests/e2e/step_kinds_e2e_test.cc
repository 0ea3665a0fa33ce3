// Steps a job's own step pattern finds (`gpuspy import --step-pattern`, `gpuspy jobs
// set-step-pattern`, the HTTP route, `gpuspy analyze --step-pattern`), time windows where no step
// is found (labelled as windows, never steady), and what `import --json` says of each file:
// through the real gpuspyd and CLI on traces written here.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <httplib.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using nlohmann::json;

// A Kineto trace: `steps` user_annotation ranges named `step_name` + N (from `first`), each 10 ms
// with one launch and its kernel; with `steps` 0, `kernels` launches of kernels each named once at
// uneven times over 2.5 s, so neither NVTX nor a repeating kernel sequence finds a step.
std::string WriteTrace(const std::string& path, const std::string& step_name, int first, int steps,
                       int kernels = 0) {
  json events = json::array();
  int corr = 1;
  auto launch = [&](double ts_us, const std::string& kernel) {
    events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 1}, {"tid", 1},
                      {"ts", ts_us}, {"dur", 5}, {"args", {{"correlation", corr}}}});
    events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", kernel}, {"pid", 0}, {"tid", 7}, {"ts", ts_us + 10},
                      {"dur", 4000}, {"args", {{"correlation", corr}, {"device", 0}, {"stream", 7}}}});
    ++corr;
  };
  for (int i = 0; i < steps; ++i) {
    const double t = 1000.0 + i * 10'000.0;
    events.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", step_name + std::to_string(first + i)},
                      {"pid", 1}, {"tid", 1}, {"ts", t}, {"dur", 10'000}});
    launch(t + 100, "ampere_bf16_gemm");
  }
  for (int i = 0; i < kernels; ++i) launch(1000.0 + i * i * 5'000.0, "kernel_" + std::to_string(i));
  std::ofstream(path) << json{{"traceEvents", events}}.dump();
  return path;
}

class StepKindsE2E : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(daemon_.Start()) << daemon_.log(); }
  testing::RunResult Gpuspy(std::vector<std::string> args) {
    args.insert(args.begin(), {GPUSPY_BIN, "--collector", daemon_.address()});
    return testing::Run(args);
  }
  json Json(std::vector<std::string> args) {
    args.insert(args.begin(), "--json");
    testing::RunResult r = Gpuspy(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json();
  }
  // The job's steps as (number, source), in order.
  std::vector<std::pair<int64_t, std::string>> Steps(const std::string& job) {
    std::vector<std::pair<int64_t, std::string>> out;
    const json listed = Json({"steps", "--job", job});
    for (const json& s : listed.value("steps", json::array())) {
      out.emplace_back(std::stoll(s.value("number", std::string("0"))), s.value("source", ""));
    }
    return out;
  }

  testing::TempDir dir_;
  testing::Gpuspyd daemon_{{.binary = GPUSPYD_BIN, .dir = dir_.path(), .http = true}};
};

const std::string kTrainSteps = R"(nvtx:train_step_(\d+))";

TEST_F(StepKindsE2E, ImportWithAStepPatternFindsTheStepsItNumbers) {
  const std::string trace = WriteTrace(dir_.path() + "/t.json", "train_step_", 7, 3);
  testing::RunResult r = Gpuspy({"import", "--job", "t", "--step-pattern", R"(train_step_(\d+))", trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("steps found with --step-pattern"), std::string::npos) << r.out;
  EXPECT_EQ(Steps("t"), (std::vector<std::pair<int64_t, std::string>>{
                            {7, kTrainSteps}, {8, kTrainSteps}, {9, kTrainSteps}}));
  // Offline, the same pattern finds the same steps.
  testing::RunResult offline = testing::Run({GPUSPY_BIN, "--json", "analyze", "--step-pattern", R"(train_step_(\d+))", trace});
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  std::vector<std::string> numbers;
  const json analysed = json::parse(offline.out);  // held: a range-for would not keep it alive
  for (const json& rep : analysed["reports"]["reports"]) numbers.push_back(rep["step"]["number"]);
  EXPECT_EQ(numbers, (std::vector<std::string>{"7", "8", "9"}));
}

TEST_F(StepKindsE2E, ABadPatternIsOneLineAndNothingIsImported) {
  const std::string trace = WriteTrace(dir_.path() + "/t.json", "train_step_", 7, 3);
  testing::RunResult r = Gpuspy({"import", "--job", "t", "--step-pattern", "train_step_(", trace});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpuspy import: step pattern 'train_step_(' is not a valid RE2 regex: missing ): "
                   "train_step_(; nothing imported\n");
  EXPECT_TRUE(Json({"jobs"}).value("jobs", json::array()).empty());
  ASSERT_EQ(Gpuspy({"import", "--job", "t", trace}).exit_code, 0);
  testing::RunResult set = Gpuspy({"jobs", "set-step-pattern", "t", "(("});
  EXPECT_EQ(set.exit_code, 2);
  EXPECT_NE(set.err.find("is not a valid RE2 regex"), std::string::npos) << set.err;
  EXPECT_EQ(std::count(set.err.begin(), set.err.end(), '\n'), 1);
  EXPECT_EQ(Gpuspy({"jobs", "set-step-pattern", "nope", "x"}).exit_code, 1);
}

TEST_F(StepKindsE2E, SetStepPatternChangesAnExistingJobsStepsAndBack) {
  const std::string trace = WriteTrace(dir_.path() + "/t.json", "train_step_", 7, 4);
  ASSERT_EQ(Gpuspy({"import", "--job", "t", trace}).exit_code, 0);
  const auto before = Steps("t");  // no ProfilerStep: found by the kernel period, or windows
  ASSERT_FALSE(before.empty());
  EXPECT_NE(before[0].second.rfind("nvtx:", 0), 0u) << before[0].second;
  const json report_before = Json({"report", "--job", "t", "--all"});

  testing::RunResult set = Gpuspy({"jobs", "set-step-pattern", "t", R"(train_step_(\d+))"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_NE(set.out.find("4 NVTX steps in 1 process"), std::string::npos) << set.out;
  EXPECT_EQ(set.out.find("1 processes"), std::string::npos) << set.out;  // the count agrees with its noun
  EXPECT_EQ(Steps("t"), (std::vector<std::pair<int64_t, std::string>>{
                            {7, kTrainSteps}, {8, kTrainSteps}, {9, kTrainSteps}, {10, kTrainSteps}}));
  // The reports follow at once: nothing cached under the old steps is served.
  const json reports = Json({"report", "--job", "t", "--all"});
  ASSERT_EQ(reports["reports"].size(), 4u);
  EXPECT_EQ(reports["reports"][0]["step"]["source"], kTrainSteps);
  EXPECT_NE(reports, report_before);
  // The job listing says which pattern its steps come from.
  testing::RunResult jobs = Gpuspy({"jobs"});
  EXPECT_NE(jobs.out.find(R"(job t: steps are the NVTX ranges matching its own pattern 'train_step_(\d+)')"),
            std::string::npos)
      << jobs.out;

  // A process that joins the job later is indexed with the job's pattern as its batches arrive.
  const std::string later = WriteTrace(dir_.path() + "/later.json", "train_step_", 20, 2);
  ASSERT_EQ(Gpuspy({"import", "--job", "t", later}).exit_code, 0);
  const json listed = Json({"steps", "--job", "t"});
  int joined = 0;
  for (const json& st : listed["steps"]) {
    if (st.value("number", std::string()) == "20" || st.value("number", std::string()) == "21") {
      EXPECT_EQ(st["source"], kTrainSteps);
      ++joined;
    }
  }
  EXPECT_EQ(joined, 2) << listed.dump();
  ASSERT_EQ(Json({"jobs", "delete", "t"}).value("processes_deleted", 0), 2);
  ASSERT_EQ(Gpuspy({"import", "--job", "t", trace}).exit_code, 0);
  // A deleted job's pattern went with it: the same name starts afresh with gpuspyd's.
  EXPECT_EQ(Steps("t"), before);
  ASSERT_EQ(Gpuspy({"jobs", "set-step-pattern", "t", R"(train_step_(\d+))"}).exit_code, 0);

  // Over HTTP too, and "" is gpuspyd's pattern again.
  httplib::Client http("127.0.0.1", daemon_.http_port());
  httplib::Result res = http.Post("/api/jobs/t/step-pattern?pattern=", "", "text/plain");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(json::parse(res->body).value("step_pattern", ""), R"(ProfilerStep#(\d+))");
  EXPECT_EQ(Steps("t"), before);
  res = http.Post("/api/jobs/t/step-pattern?pattern=%28%28", "", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400) << res->body;
}

TEST_F(StepKindsE2E, AJobWithoutStepsIsToldInTimeWindowsNeverSteady) {
  const std::string trace = WriteTrace(dir_.path() + "/w.json", "", 0, 0, /*kernels=*/24);
  ASSERT_EQ(Gpuspy({"import", "--job", "w", trace}).exit_code, 0);
  const auto steps = Steps("w");
  ASSERT_GE(steps.size(), 2u);
  for (const auto& [n, source] : steps) EXPECT_EQ(source, "window:1000ms");

  testing::RunResult listed = Gpuspy({"steps", "--job", "w"});
  EXPECT_NE(listed.out.find("no steps found for job 'w': "), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find(" window "), std::string::npos) << listed.out;
  testing::RunResult report = Gpuspy({"report", "--job", "w", "--all"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("WINDOW"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("rank 0 window 0:"), std::string::npos) << report.out;
  EXPECT_EQ(report.out.find("rank 0 step "), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("! a 1000 ms time window, not a step"), std::string::npos) << report.out;
  testing::RunResult summary = Gpuspy({"summary", "--job", "w"});
  EXPECT_NE(summary.out.find("no steps found: " + std::to_string(steps.size()) + " time windows"), std::string::npos)
      << summary.out;
  EXPECT_EQ(summary.out.find("median step"), std::string::npos) << summary.out;

  // gpuspy diff compares windows as windows, and says so.
  testing::RunResult diff = testing::Run({GPUSPY_BIN, "diff", trace, trace});
  EXPECT_NE(diff.out.find("has no steps: its " + std::to_string(steps.size()) + " time windows are compared"),
            std::string::npos) << diff.out << diff.err;
  // Windows against real steps are not compared at all: "faster by 777.6 ms per step" between a
  // 1 s window and a 10 ms step says nothing. One line naming both sides, exit 1, from the files
  // and from gpuspyd alike.
  const std::string stepped = WriteTrace(dir_.path() + "/s.json", "ProfilerStep#", 0, 6);
  testing::RunResult mixed = testing::Run({GPUSPY_BIN, "diff", trace, stepped});
  EXPECT_EQ(mixed.exit_code, 1) << mixed.out << mixed.err;
  EXPECT_EQ(mixed.out, "");
  EXPECT_EQ(mixed.err.rfind("gpuspy diff: not comparable: A (", 0), 0u) << mixed.err;
  EXPECT_NE(mixed.err.find(") has no steps, only " + std::to_string(steps.size()) + " time windows"),
            std::string::npos) << mixed.err;
  EXPECT_NE(mixed.err.find("a window is not a step"), std::string::npos) << mixed.err;
  EXPECT_EQ(std::count(mixed.err.begin(), mixed.err.end(), '\n'), 1) << mixed.err;
  ASSERT_EQ(Gpuspy({"import", "--job", "s", stepped}).exit_code, 0);
  testing::RunResult stored = Gpuspy({"diff", "w", "s"});
  EXPECT_NE(stored.exit_code, 0) << stored.out;
  EXPECT_NE(stored.err.find("not comparable: A (w) has no steps"), std::string::npos) << stored.err;
  const json s = Json({"summary", "--job", "w"})["summary"];
  EXPECT_TRUE(s.value("figures_per_window", false));
  EXPECT_FALSE(s.contains("steady_step_count"));  // 0: proto3 JSON leaves it out
  EXPECT_FALSE(s.contains("median_step_wall_ns"));
  bool evidence = false;
  const json reports = Json({"report", "--job", "w", "--all"});
  for (const json& r : reports["reports"]) {
    EXPECT_FALSE(r.value("steady_state", false));
    for (const json& f : r.value("findings", json::array())) {
      ASSERT_FALSE(f["evidence"].empty());
      EXPECT_EQ(f["evidence"][0]["key"], "window");
      evidence = true;
    }
  }
  EXPECT_TRUE(evidence) << "no finding on any window";
}

TEST_F(StepKindsE2E, ImportJsonAccountsForEveryEventOfEachFile) {
  const std::string trace = WriteTrace(dir_.path() + "/t.json", "train_step_", 7, 3);
  // Two flow arrows, a metadata event and a GPU-side annotation: each skipped with its reason.
  json doc = json::parse(std::ifstream(trace));
  doc["traceEvents"].push_back({{"ph", "s"}, {"cat", "ac2g"}, {"name", "ac2g"}, {"id", 1}, {"pid", 1}, {"tid", 1}, {"ts", 1100}});
  doc["traceEvents"].push_back({{"ph", "f"}, {"cat", "ac2g"}, {"name", "ac2g"}, {"id", 1}, {"pid", 0}, {"tid", 7}, {"ts", 1110}});
  doc["traceEvents"].push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"args", {{"name", "python"}}}});
  doc["traceEvents"].push_back({{"ph", "X"}, {"cat", "gpu_user_annotation"}, {"name", "train_step_7"}, {"pid", 0},
                                {"tid", 7}, {"ts", 1110}, {"dur", 4000}});
  std::ofstream(trace) << doc.dump();
  const json out = Json({"import", "--job", "t", trace});
  ASSERT_EQ(out["files"].size(), 1u);
  const json& f = out["files"][0];
  EXPECT_EQ(f["file"], trace);
  EXPECT_EQ(f["job"], "t");
  EXPECT_GT(f["process_id"].get<double>(), 0);
  EXPECT_EQ(f["bytes_read"].get<double>(), static_cast<double>(std::filesystem::file_size(trace)));
  EXPECT_EQ(f["events_read"].get<double>(), static_cast<double>(doc["traceEvents"].size()));
  EXPECT_EQ(f["events_skipped"].get<double>(), 4);
  EXPECT_EQ(f["events_imported"].get<double>() + f["events_skipped"].get<double>(), f["events_read"].get<double>());
  EXPECT_EQ(f["events_stored"].get<double>(), f["events_imported"].get<double>() + f["collective_records"].get<double>());
  std::map<std::string, double> reasons;
  for (const json& why : f["skipped"]) {
    EXPECT_FALSE(why["reason"].get<std::string>().empty());
    reasons[why["key"]] = why["events"].get<double>();
  }
  EXPECT_EQ(reasons, (std::map<std::string, double>{{"gpu_user_annotation", 1}, {"phase M", 1}, {"phase f", 1}, {"phase s", 1}}));
  // The text names them too.
  testing::RunResult text = Gpuspy({"import", "--job", "u", "--replace", trace});
  EXPECT_NE(text.out.find("skipped in " + trace + ": 1 "), std::string::npos) << text.out;
}

}  // namespace
}  // namespace gpuspy
