// The HTTP API's query parameters -> Query requests (collector/http/query_params.h): defaults,
// each route's choices, and the malformed values that must answer 400 rather than a request.
#include "collector/http/query_params.h"

#include <gtest/gtest.h>

#include <limits>

namespace gpuspy::collector {
namespace {

TEST(QueryParams, IntParamIsNonNegativeTheFirstOfRepeatedKeysCounts) {
  EXPECT_EQ(*IntParam({}, "process", 7), 7);
  EXPECT_EQ(*IntParam({{"process", "3"}, {"process", "9"}}, "process", 0), 3);
  for (const char* bad : {"-1", "", "1.5", "0x10", "9223372036854775808", "1e3"}) {
    absl::StatusOr<int64_t> v = IntParam({{"limit", bad}}, "limit", 0);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(v.status().message().find("limit"), std::string::npos);
  }
}

TEST(QueryParams, ReportIsAllUnlessAStepOrALastCountIsGiven) {
  EXPECT_TRUE(ReportQuery("j", {})->all());
  EXPECT_TRUE(ReportQuery("j", {{"all", "1"}, {"step", "4"}})->all());
  const v1::GetStepReportRequest step = *ReportQuery("j", {{"step", "4"}, {"process", "2"}});
  EXPECT_FALSE(step.all());
  EXPECT_EQ(step.step(), 4);
  EXPECT_EQ(step.process_id(), 2u);
  EXPECT_EQ(step.job_id(), "j");
  EXPECT_EQ(ReportQuery("j", {{"last", "3"}})->last(), 3u);
}

// Was a truncating cast: last=4294967296 asked for the last 0 steps.
TEST(QueryParams, LastCountBeyondUint32IsClampedNotTruncated) {
  EXPECT_EQ(ReportQuery("j", {{"last", "4294967296"}})->last(), std::numeric_limits<uint32_t>::max());
}

TEST(QueryParams, EventsWindowAndClampedLimit) {
  const v1::GetEventsRequest r =
      *EventsQuery("j", {{"from", "10"}, {"to", "20"}, {"limit", "99999999999"}});
  EXPECT_EQ(r.from_ns(), 10);
  EXPECT_EQ(r.to_ns(), 20);
  EXPECT_EQ(r.limit(), std::numeric_limits<uint32_t>::max());
  EXPECT_FALSE(EventsQuery("j", {{"to", "x"}}).ok());
  // Passed on as it is: the engine checks it (a bad one is a 400 there).
  EXPECT_EQ(EventsQuery("j", {{"cursor", "ZTE"}})->cursor(), "ZTE");
}

TEST(QueryParams, TimelineNeedsBothProcessAndStep) {
  EXPECT_FALSE(ParseTimelineQuery({{"process", "1"}}).ok());
  EXPECT_FALSE(ParseTimelineQuery({{"step", "1"}}).ok());
  EXPECT_FALSE(ParseTimelineQuery({{"process", "0"}, {"step", "1"}}).ok());
  const TimelineQuery q = *ParseTimelineQuery({{"process", "2"}, {"step", "0"}});
  EXPECT_EQ(q.process_id, 2u);
  EXPECT_EQ(q.step, 0);
}

TEST(QueryParams, TraceStepsAreOneNumberOrAnOrderedRange) {
  const TraceQuery whole = *ParseTraceQuery({});
  EXPECT_FALSE(whole.has_steps);
  EXPECT_EQ(whole.first_step, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(whole.last_step, std::numeric_limits<int64_t>::max());
  const TraceQuery one = *ParseTraceQuery({{"steps", "5"}});
  EXPECT_TRUE(one.has_steps);
  EXPECT_EQ(one.first_step, 5);
  EXPECT_EQ(one.last_step, 5);
  const TraceQuery range = *ParseTraceQuery({{"steps", "2-4"}, {"process", "3"}});
  EXPECT_EQ(range.first_step, 2);
  EXPECT_EQ(range.last_step, 4);
  EXPECT_EQ(range.process_id, 3u);
  // Open ranges, as the CLI takes them (analysis/diff/run_selector.h): up to 3, from 1 on.
  const TraceQuery upto = *ParseTraceQuery({{"steps", "-3"}});
  EXPECT_EQ(upto.first_step, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(upto.last_step, 3);
  const TraceQuery from = *ParseTraceQuery({{"steps", "1-"}});
  EXPECT_EQ(from.first_step, 1);
  EXPECT_EQ(from.last_step, std::numeric_limits<int64_t>::max());
  for (const char* bad : {"4-2", "1-2-3", "a-b", "", "-"}) {
    EXPECT_FALSE(ParseTraceQuery({{"steps", bad}}).ok()) << bad;
  }
  EXPECT_NE(ParseTraceQuery({{"steps", "4-2"}}).status().message().find("reversed"),
            std::string::npos);
}

TEST(QueryParams, TraceFileNameKeepsOnlySafeCharacters) {
  EXPECT_EQ(TraceFileName("job1", {}), "job1.trace.json");
  EXPECT_EQ(TraceFileName("a b/\"c", {{"steps", "1-2"}, {"process", "3"}}),
            "a_b__c-steps-1-2-p3.trace.json");
  EXPECT_EQ(TraceFileName("x", {{"steps", "\r\nSet-Cookie: y"}}), "x-steps-__Set-Cookie__y.trace.json");
}

// httplib kept the text after a value's last '=': process=1 OR 1=1 became process=1.
TEST(QueryParams, AValueRunsToTheNextAmpersandAndIsPercentDecoded) {
  const QueryParams q = *ParseQuery("/api/jobs/j/events?process=1%20OR%201=1&limit=5&flag&x=a+b%2Bc");
  EXPECT_EQ(q.find("process")->second, "1 OR 1=1");
  EXPECT_EQ(q.find("limit")->second, "5");
  EXPECT_EQ(q.find("flag")->second, "");
  EXPECT_EQ(q.find("x")->second, "a b+c");
  EXPECT_FALSE(EventsQuery("j", q).ok());
  EXPECT_TRUE(ParseQuery("/api/jobs")->empty());
  EXPECT_TRUE(ParseQuery("/api/jobs?")->empty());
  for (const char* bad : {"/x?a=%", "/x?a=%4", "/x?a=%zz"}) EXPECT_FALSE(ParseQuery(bad).ok()) << bad;
}

// A parameter a route does not take was ignored: summary?process=1 OR 1=1 answered the whole job.
TEST(QueryParams, AParameterTheRouteDoesNotTakeIsRefused) {
  absl::Status st = CheckRoute("j", {{"process", "1 OR 1=1"}}, {});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "unknown parameter 'process' (this route takes: none)");
  EXPECT_EQ(StepsQuery("j", {{"step", "1"}}).status().message(),
            "unknown parameter 'step' (this route takes: process)");
  EXPECT_FALSE(EventsQuery("j", {{"process", "1 OR 1=1"}}).ok());
  EXPECT_FALSE(ParseTraceQuery({{"step", "1"}}).ok());
  EXPECT_TRUE(CheckRoute("j", {{"process", "1"}}, {"process"}).ok());
}

// Invalid UTF-8 was echoed as '' in the 400, with a libprotobuf ERROR in the log.
TEST(QueryParams, InvalidUtf8IsRefusedByName) {
  EXPECT_EQ(ReportQuery("j", {{"process", "\xff"}}).status().message(),
            "parameter process is not valid UTF-8");
  EXPECT_EQ(StepsQuery("j\xc0\xaf", {}).status().message(), "the job id is not valid UTF-8");
  EXPECT_FALSE(CheckRoute("", {{"\xfe", "1"}}, {}).ok());
}

TEST(QueryParams, Utf8ValidityFollowsRfc3629) {
  for (const char* good : {"", "ascii", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf"}) {
    EXPECT_TRUE(IsValidUtf8(good)) << good;
  }
  for (const char* bad : {"\x80", "\xc0\xaf", "\xc3", "\xe0\x80\xaf", "\xed\xa0\x80",
                          "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "a\xff" "b"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << bad;
  }
}

}  // namespace
}  // namespace gpuspy::collector
