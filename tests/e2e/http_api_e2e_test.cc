// gpuspyd's HTTP/JSON API against a real daemon: the same answers as the Query service, 400 on bad
// parameters, 404 on unknown jobs, and the trace export.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "httplib.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

class HttpApiE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.Start()) << daemon_.log();
    http_port_ = daemon_.http_port();
    ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", daemon_.address(),
                            "--job", "web", "--steps", "5", "--ranks", "2"})
                  .exit_code,
              0);
  }

  httplib::Result Get(const std::string& path) {
    httplib::Client c("127.0.0.1", http_port_);
    c.set_read_timeout(30, 0);
    return c.Get(path.c_str());
  }

  testing::TempDir dir_;
  testing::Gpuspyd daemon_{{.binary = GPUSPYD_BIN, .dir = dir_.path(), .http = true}};
  int http_port_ = 0;
};

TEST_F(HttpApiE2E, JobsStepsReportsAndSummaryAsJson) {
  auto jobs = Get("/api/jobs");
  ASSERT_TRUE(jobs);
  EXPECT_EQ(jobs->status, 200);
  auto j = nlohmann::json::parse(jobs->body);
  ASSERT_EQ(j["jobs"].size(), 1u);
  EXPECT_EQ(j["jobs"][0]["job_id"], "web");
  EXPECT_EQ(j["jobs"][0]["processes"].size(), 2u);

  auto steps = Get("/api/jobs/web/steps");
  ASSERT_TRUE(steps);
  EXPECT_EQ(nlohmann::json::parse(steps->body)["steps"].size(), 10u);

  auto report = Get("/api/jobs/web/report?last=2");
  ASSERT_TRUE(report);
  ASSERT_EQ(report->status, 200);
  auto r = nlohmann::json::parse(report->body)["reports"];
  ASSERT_EQ(r.size(), 4u);
  for (const auto& rep : r) EXPECT_FALSE(rep["primary_bottleneck"].get<std::string>().empty());

  auto summary = Get("/api/jobs/web/summary");
  ASSERT_TRUE(summary);
  EXPECT_EQ(nlohmann::json::parse(summary->body)["summary"]["step_count"], "10");

  auto events = Get("/api/jobs/web/events?limit=10");
  ASSERT_TRUE(events);
  auto e = nlohmann::json::parse(events->body);
  EXPECT_EQ(e["truncated"], true);
}

TEST_F(HttpApiE2E, BadParametersAre400AndUnknownJobs404) {
  auto bad = Get("/api/jobs/web/report?step=abc");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("step='abc'"), std::string::npos) << bad->body;
  auto bad_steps = Get("/api/jobs/web/trace?steps=5-1");
  ASSERT_TRUE(bad_steps);
  EXPECT_EQ(bad_steps->status, 400);
  auto missing = Get("/api/jobs/nope/report");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(nlohmann::json::parse(missing->body)["error"], "unknown job 'nope'");
  auto no_route = Get("/api/nothing");
  ASSERT_TRUE(no_route);
  EXPECT_EQ(no_route->status, 404);
}

// Issue 22: a filter a route does not take was ignored (the whole job answered as if filtered),
// and a value that is not UTF-8 came back as '' with a libprotobuf ERROR in the log.
TEST_F(HttpApiE2E, UnknownParametersAndInvalidUtf8Are400ByName) {
  auto ignored = Get("/api/jobs/web/summary?process=1%20OR%201=1");
  ASSERT_TRUE(ignored);
  EXPECT_EQ(ignored->status, 400);
  EXPECT_EQ(nlohmann::json::parse(ignored->body)["error"],
            "unknown parameter 'process' (this route takes: none)");
  auto injected = Get("/api/jobs/web/events?process=1%20OR%201=1");
  ASSERT_TRUE(injected);
  EXPECT_EQ(injected->status, 400);
  auto not_utf8 = Get("/api/jobs/web/report?process=%FF%FE");
  ASSERT_TRUE(not_utf8);
  EXPECT_EQ(not_utf8->status, 400);
  EXPECT_EQ(nlohmann::json::parse(not_utf8->body)["error"], "parameter process is not valid UTF-8");
  auto job_not_utf8 = Get("/api/jobs/%C0%AF/summary");
  ASSERT_TRUE(job_not_utf8);
  EXPECT_EQ(job_not_utf8->status, 400);
  EXPECT_EQ(daemon_.log().find("libprotobuf ERROR"), std::string::npos) << daemon_.log();
}

TEST_F(HttpApiE2E, TraceOfAStepRangeIsAChromeTrace) {
  auto trace = Get("/api/jobs/web/trace?steps=2-3");
  ASSERT_TRUE(trace);
  ASSERT_EQ(trace->status, 200);
  auto t = nlohmann::json::parse(trace->body);
  ASSERT_TRUE(t.contains("traceEvents"));
  int steps = 0, kernels = 0;
  for (const auto& ev : t["traceEvents"]) {
    if (ev.value("cat", "") == "gpuspy_step") ++steps;
    if (ev.value("cat", "") == "kernel") ++kernels;
  }
  EXPECT_EQ(steps, 4);  // steps 2 and 3 of both ranks
  EXPECT_GT(kernels, 0);
  EXPECT_EQ(trace->body.find("\"ProfilerStep#0\""), std::string::npos);
}

}  // namespace
}  // namespace gpuspy
