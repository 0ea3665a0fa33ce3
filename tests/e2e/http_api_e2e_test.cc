// gpuspyd's HTTP/JSON API against a real daemon: the same answers as the Query service, 400 on bad
// parameters, 404 on unknown jobs, the trace export, and the step timeline (Query.GetStepTimeline
// rendered).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <grpcpp/grpcpp.h>

#include "gpuspy/v1/services.grpc.pb.h"
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

// Issue 22: one events answer of a 5 M-event job took gpuspyd's RSS to 3.55 GB. Pages now: read
// through next_cursor, the job's events come back whole (as many as the job listing counts), a
// huge limit is clamped and says so, a cursor that is not one is a 400 in one line; the CLI
// follows the cursor too.
TEST_F(HttpApiE2E, EventsPageThroughTheCursor) {
  auto jobs = Get("/api/jobs");
  ASSERT_TRUE(jobs);
  const uint64_t total =
      std::stoull(nlohmann::json::parse(jobs->body)["jobs"][0]["event_count"].get<std::string>());
  ASSERT_GT(total, 2'000u);

  uint64_t seen = 0;
  int pages = 0;
  std::string cursor;
  do {
    auto page = Get("/api/jobs/web/events?limit=1000" + (cursor.empty() ? "" : "&cursor=" + cursor));
    ASSERT_TRUE(page);
    ASSERT_EQ(page->status, 200) << page->body;
    auto j = nlohmann::json::parse(page->body);
    uint64_t n = 0;
    for (const auto& p : j["processes"]) n += p["events"].size();
    EXPECT_LE(n, 1000u);
    seen += n;
    cursor = j.value("next_cursor", "");
    ASSERT_LT(++pages, 10'000);
  } while (!cursor.empty());
  EXPECT_EQ(seen, total);
  EXPECT_GE(pages, static_cast<int>(total / 1000));

  auto huge = Get("/api/jobs/web/events?limit=5000000");
  ASSERT_TRUE(huge);
  ASSERT_EQ(huge->status, 200);
  EXPECT_EQ(nlohmann::json::parse(huge->body)["limit_clamped_to"], 100000);

  auto bad = Get("/api/jobs/web/events?cursor=garbage");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  const std::string error = nlohmann::json::parse(bad->body)["error"];
  EXPECT_EQ(error.rfind("bad cursor: ", 0), 0u) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);

  testing::RunResult cli = testing::Run(
      {GPUSPY_BIN, "--collector", daemon_.address(), "events", "--job", "web", "--limit", "0"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  uint64_t lines = 0;
  for (size_t at = 0; at < cli.out.size();) {
    const size_t end = cli.out.find('\n', at);
    if (cli.out[at] != '#') ++lines;
    at = end == std::string::npos ? cli.out.size() : end + 1;
  }
  EXPECT_EQ(lines, total);
}

// Issue 22: the trace export was built whole in memory. It is now written as the pages of events
// are read (chunked): a job of several pages (226k events; a page is at most 100,000 events or
// 3 MiB) comes out as one valid document holding every kernel and API call the job has.
TEST_F(HttpApiE2E, ATraceOfManyPagesIsStreamedWhole) {
  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", daemon_.address(), "--job", "big",
                          "--scenario", "launch_storm", "--steps", "30"})
                .exit_code,
            0);
  uint64_t kernels = 0, apis = 0;
  int pages = 0;
  std::string cursor;
  do {
    auto page = Get("/api/jobs/big/events" + (cursor.empty() ? "" : "?cursor=" + cursor));
    ASSERT_TRUE(page);
    ASSERT_EQ(page->status, 200) << page->body;
    auto j = nlohmann::json::parse(page->body);
    for (const auto& p : j["processes"]) {
      for (const auto& e : p["events"]) {
        kernels += e.contains("kernel") || e.contains("graph_launch");  // both kernel spans
        apis += e.contains("api");
      }
    }
    cursor = j.value("next_cursor", "");
    ++pages;
  } while (!cursor.empty());
  ASSERT_GT(pages, 2);

  auto trace = Get("/api/jobs/big/trace");
  ASSERT_TRUE(trace);
  ASSERT_EQ(trace->status, 200);
  EXPECT_EQ(trace->get_header_value("Transfer-Encoding"), "chunked");
  auto t = nlohmann::json::parse(trace->body);  // throws (fails the test) on a cut document
  uint64_t kernel_spans = 0, api_spans = 0;
  for (const auto& ev : t["traceEvents"]) {
    if (ev["ph"] != "X") continue;
    kernel_spans += ev["cat"] == "kernel";
    api_spans += ev["cat"] == "cuda_runtime" || ev["cat"] == "cuda_driver";
    EXPECT_GE(ev["ts"].get<double>(), 0.0);
  }
  EXPECT_EQ(kernel_spans, kernels);
  EXPECT_EQ(api_spans, apis);
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

// The timeline the viewer draws is Query.GetStepTimeline's answer rendered: the same lanes,
// events, strings and idle spans over gRPC as in the HTTP JSON, and the same refusals.
TEST_F(HttpApiE2E, TheTimelineIsGetStepTimelineRendered) {
  auto steps = Get("/api/jobs/web/steps");
  ASSERT_TRUE(steps);
  const nlohmann::json step = nlohmann::json::parse(steps->body)["steps"][2];
  const std::string process = step["process_id"].get<std::string>();
  const std::string number = step.value("number", std::string("0"));
  auto http = Get("/api/jobs/web/timeline?process=" + process + "&step=" + number);
  ASSERT_TRUE(http);
  ASSERT_EQ(http->status, 200) << http->body;
  const nlohmann::json j = nlohmann::json::parse(http->body);

  auto stub = v1::Query::NewStub(grpc::CreateChannel(daemon_.address(), grpc::InsecureChannelCredentials()));
  v1::GetStepTimelineRequest request;
  request.set_job_id("web");
  request.set_process_id(std::stoull(process));
  request.set_step(std::stoll(number));
  v1::GetStepTimelineResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(stub->GetStepTimeline(&context, request, &response).ok());
  const v1::StepTimeline& t = response.timeline();
  EXPECT_EQ(j["origin_ns"], std::to_string(t.origin_ns()));
  EXPECT_EQ(j["wall_ns"], t.wall_ns());
  EXPECT_EQ(j["truncated"], t.truncated());
  ASSERT_GT(t.events().lane_size(), 0);
  EXPECT_EQ(j["events"]["lane"].size(), static_cast<size_t>(t.events().lane_size()));
  EXPECT_EQ(j["events"]["start"].get<std::vector<int64_t>>(),
            std::vector<int64_t>(t.events().start_ns().begin(), t.events().start_ns().end()));
  EXPECT_EQ(j["strings"].get<std::vector<std::string>>(),
            std::vector<std::string>(t.strings().begin(), t.strings().end()));
  ASSERT_EQ(j["lanes"].size(), static_cast<size_t>(t.lanes_size()));
  for (int i = 0; i < t.lanes_size(); ++i) EXPECT_EQ(j["lanes"][i]["label"], t.lanes(i).label());
  ASSERT_EQ(j["idle"].size(), static_cast<size_t>(t.idle_size()));
  for (int i = 0; i < t.idle_size(); ++i) {
    EXPECT_EQ(j["idle"][i], nlohmann::json({t.idle(i).start_ns(), t.idle(i).end_ns(), t.idle(i).cause()}));
  }

  request.set_step(1'000'000);
  grpc::ClientContext unknown_step;
  EXPECT_EQ(stub->GetStepTimeline(&unknown_step, request, &response).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Get("/api/jobs/web/timeline?process=" + process + "&step=1000000")->status, 404);
  request.set_process_id(0);  // step numbers are per process
  grpc::ClientContext no_process;
  EXPECT_EQ(stub->GetStepTimeline(&no_process, request, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Get("/api/jobs/web/timeline?step=" + number)->status, 400);
}

}  // namespace
}  // namespace gpuspy
