// Detector and severity are proto enums whose value names are the strings the JSON printed when
// they were string fields: the web viewer, the e2e tests and users' scripts read those strings.
// These pin the spelling in every JSON the project prints (the CLI's two styles, the HTTP API),
// and the one converter that turns names into values and back.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "analysis/detector_names.h"
#include "collector/http/http_reply.h"
#include "gpuspy/v1/report.pb.h"
#include "viewer/cli/json_output.h"

namespace gpuspy::analysis {
namespace {

// Every name a Finding.detector or StepReport.primary_bottleneck string held (docs/detectors.md).
const std::vector<std::string> kDetectors = {
    "none",          "sync_stall",     "launch_storm",        "copy_dominated",
    "input_stall",   "host_bound",     "gpu_bound",           "gpu_idle",
    "cuda_api_bound", "alloc_churn",   "memory_growth",       "fp32_gemm",
    "unfused_elementwise", "unfused_attention", "new_kernels", "warmup",
    "outlier_step",  "straggler",      "straggler_wait",      "exposed_comm",
    "comm_storm",    "insufficient_data"};
const std::vector<std::string> kSeverities = {"info", "warning", "critical"};

// The report as each JSON of the project prints it.
std::vector<nlohmann::json> Printed(const v1::StepReport& r) {
  return {nlohmann::json::parse(cli::ToJson(r, cli::JsonStyle::kProto)),
          nlohmann::json::parse(cli::ToJson(r, cli::JsonStyle::kFlat)),
          nlohmann::json::parse(*collector::ToJson(absl::StatusOr<v1::StepReport>(r)))};
}

TEST(DetectorNames, EveryDetectorPrintsAsItsOldString) {
  ASSERT_EQ(v1::Detector_descriptor()->value_count(), static_cast<int>(kDetectors.size()) + 1)
      << "a new detector: add its name here (and to docs/detectors.md)";
  for (const std::string& name : kDetectors) {
    const std::optional<v1::Detector> d = ParseDetector(name);
    ASSERT_TRUE(d.has_value()) << name;
    EXPECT_EQ(DetectorName(*d), name);
    v1::StepReport r;
    r.set_primary_bottleneck(*d);
    if (*d != v1::none) r.add_findings()->set_detector(*d);
    for (const nlohmann::json& j : Printed(r)) {
      EXPECT_EQ(j["primary_bottleneck"], name) << j.dump();
      if (*d != v1::none) {
        EXPECT_EQ(j["findings"][0]["detector"], name) << j.dump();
      }
    }
  }
}

TEST(DetectorNames, EverySeverityPrintsAsItsOldString) {
  for (const std::string& name : kSeverities) {
    const std::optional<v1::Severity> s = ParseSeverity(name);
    ASSERT_TRUE(s.has_value()) << name;
    EXPECT_EQ(SeverityName(*s), name);
    v1::StepReport r;
    r.add_findings()->set_severity(*s);
    for (const nlohmann::json& j : Printed(r)) EXPECT_EQ(j["findings"][0]["severity"], name) << j.dump();
  }
}

// Unset, they print as the empty strings did: left out by the proto mapping, "" when flat.
TEST(DetectorNames, UnsetPrintsAsTheEmptyStringDid) {
  v1::RankSummary rank;
  const nlohmann::json proto = nlohmann::json::parse(cli::ToJson(rank, cli::JsonStyle::kProto));
  EXPECT_FALSE(proto.contains("primary_bottleneck")) << proto.dump();
  EXPECT_FALSE(proto.contains("straggler_severity")) << proto.dump();
  const nlohmann::json flat = nlohmann::json::parse(cli::ToJson(rank, cli::JsonStyle::kFlat));
  EXPECT_EQ(flat["primary_bottleneck"], "") << flat.dump();
  EXPECT_EQ(flat["straggler_severity"], "") << flat.dump();
  EXPECT_EQ(DetectorName(v1::DETECTOR_UNSPECIFIED), "");
  EXPECT_EQ(SeverityName(v1::SEVERITY_UNSPECIFIED), "");
}

TEST(DetectorNames, ParseRejectsWhatNamesNoDetector) {
  EXPECT_FALSE(ParseDetector("no_such_detector").has_value());
  EXPECT_FALSE(ParseDetector("").has_value());
  EXPECT_FALSE(ParseDetector("DETECTOR_UNSPECIFIED").has_value());
  EXPECT_FALSE(ParseDetector("SYNC_STALL").has_value()) << "names are lowercase, as printed";
  EXPECT_FALSE(ParseSeverity("severe").has_value());
  EXPECT_FALSE(ParseSeverity("SEVERITY_UNSPECIFIED").has_value());
}

}  // namespace
}  // namespace gpuspy::analysis
