// --json and --json=flat: the same names and nesting; flat has numbers as numbers and every
// scalar present, so a script needs no string-to-int conversions and no defaults of its own.
#include "viewer/cli/json_output.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "gpuspy/v1/report.pb.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::cli {
namespace {

v1::StepReport AReport() {
  v1::StepReport r;
  r.mutable_step()->set_number(7);
  r.mutable_step()->set_start_ns(int64_t{1} << 60);  // beyond a double's 2^53: exact or not at all
  r.mutable_breakdown()->set_wall_ns(25'000'000);
  v1::Finding* f = r.add_findings();
  f->set_detector(v1::sync_stall);
  f->set_lost_ns(16'900'000);
  v1::Evidence* e = f->add_evidence();
  e->set_key("host_blocked");
  e->set_value("18.1 ms");
  e->set_quantity(18'112'000);
  e->set_unit("ns");
  return r;
}

TEST(CliJson, FlatHasIntegersAsNumbersExactly) {
  const nlohmann::json j = nlohmann::json::parse(ToJson(AReport(), JsonStyle::kFlat));
  ASSERT_TRUE(j["step"]["start_ns"].is_number_integer()) << j.dump();
  EXPECT_EQ(j["step"]["start_ns"].get<int64_t>(), int64_t{1} << 60);
  EXPECT_EQ(j["findings"][0]["lost_ns"].get<int64_t>(), 16'900'000);
  EXPECT_EQ(j["findings"][0]["evidence"][0]["quantity"].get<double>(), 18'112'000);
  EXPECT_EQ(j["findings"][0]["evidence"][0]["unit"], "ns");
}

TEST(CliJson, ProtoStyleWritesInt64AsStringsAndOmitsDefaults) {
  const nlohmann::json j = nlohmann::json::parse(ToJson(AReport(), JsonStyle::kProto));
  EXPECT_TRUE(j["step"]["start_ns"].is_string()) << j.dump();
  EXPECT_FALSE(j["step"].contains("end_ns"));  // 0: left out by the proto mapping
}

TEST(CliJson, FlatHasEveryScalarButOnlySetMessagesAndOneofMembers) {
  const nlohmann::json j = nlohmann::json::parse(ToJson(AReport(), JsonStyle::kFlat));
  EXPECT_EQ(j["step"]["end_ns"], 0);
  EXPECT_EQ(j["primary_bottleneck"], "");
  EXPECT_EQ(j["steady_state"], false);
  EXPECT_FALSE(j.contains("memory")) << "an unset message is absent, not an object of zeros";
  EXPECT_TRUE(j["findings"][0]["evidence"].is_array());

  v1::ClientMessage m;
  m.mutable_heartbeat();
  const nlohmann::json one = nlohmann::json::parse(ToJson(m, JsonStyle::kFlat));
  EXPECT_TRUE(one.contains("heartbeat")) << one.dump();
  EXPECT_FALSE(one.contains("hello")) << "only the oneof member that is set";
}

// The well-known JSON types (Struct, Value, ListValue) are JSON already: kept as they are. (Built
// from JSON, in libprotobuf: a Struct's map built by code compiled with TSan crashes, as Debian's
// libprotobuf is built without it and a map field's layout differs under TSan.)
TEST(CliJson, FlatKeepsAStructAsItsJson) {
  google::protobuf::Struct st;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  R"({"events_stored": 26924, "file": "nccl_a100.json.gz", "list": [1, "a"]})", &st)
                  .ok());
  const nlohmann::json j = nlohmann::json::parse(ToJson(st, JsonStyle::kFlat));
  EXPECT_EQ(j["events_stored"], 26924);
  EXPECT_EQ(j["file"], "nccl_a100.json.gz");
  EXPECT_EQ(j["list"], nlohmann::json::parse(R"([1, "a"])"));
}

TEST(CliJson, FlatSurvivesTextThatIsNotUtf8) {
  v1::StepReport r;
  r.set_capture_note(std::string("bad \xff byte"));
  const std::string out = ToJson(r, JsonStyle::kFlat);
  const nlohmann::json j = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << out;
  EXPECT_NE(j["capture_note"].get<std::string>().find("bad "), std::string::npos);
}

}  // namespace
}  // namespace gpuspy::cli
