// The FLOPs of the shared two-rank trace's steps (recorded with record_shapes=True, no `flops`
// args, no device properties) against a hand computation from its raw JSON: every matmul op
// (aten::mm / addmm / bmm / baddbmm) whose launch calls (on its thread, inside its range) started
// kernels, 2 x M x N x K (x batch) from its "Input Dims", and its kernels' time.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/analyzed_trace.h"

namespace gpuspy {
namespace {

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return "";
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

int64_t Ns(const nlohmann::json& us) { return std::llround(us.get<double>() * 1000); }

struct HandStep {
  uint64_t flops = 0;
  int64_t kernel_ns = 0;
  int ops = 0;
};

// By step number: the hand's matmul FLOPs and kernel time.
std::map<int64_t, HandStep> HandCount(const nlohmann::json& doc) {
  struct Span { int64_t start, end; };
  std::map<int64_t, Span> steps;
  std::map<int64_t, int64_t> kernel_ns;                            // by correlation
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> calls;  // tid -> (start, corr)
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    const std::string cat = e.value("cat", ""), name = e.value("name", "");
    if (name.rfind("ProfilerStep#", 0) == 0) {
      steps[std::stoll(name.substr(13))] = {Ns(e["ts"]), Ns(e["ts"]) + Ns(e["dur"])};
    } else if (cat == "kernel") {
      kernel_ns[e["args"]["correlation"].get<int64_t>()] += Ns(e["dur"]);
    } else if (cat == "cuda_runtime") {
      calls[e["tid"].get<int64_t>()].emplace_back(Ns(e["ts"]), e["args"]["correlation"].get<int64_t>());
    }
  }
  std::map<int64_t, HandStep> out;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("cat", "") != "cpu_op") continue;
    const std::string name = e.value("name", "");
    const bool bias_first = name == "aten::addmm" || name == "aten::baddbmm";
    if (name != "aten::mm" && name != "aten::bmm" && !bias_first) continue;
    const auto& dims = e["args"]["Input Dims"];
    const auto& a = dims[bias_first ? 1 : 0];
    const auto& b = dims[bias_first ? 2 : 1];
    uint64_t flops = 2;
    if (a.size() == 3) flops *= a[0].get<uint64_t>();
    flops *= a[a.size() - 2].get<uint64_t>() * a[a.size() - 1].get<uint64_t>() * b[b.size() - 1].get<uint64_t>();
    const int64_t start = Ns(e["ts"]), end = start + Ns(e["dur"]);
    int64_t ns = 0;
    for (const auto& [at, corr] : calls[e["tid"].get<int64_t>()]) {
      if (at >= start && at <= end && kernel_ns.contains(corr)) ns += kernel_ns[corr];
    }
    if (ns == 0) continue;
    for (const auto& [number, span] : steps) {
      if (start >= span.start && start < span.end) {
        out[number].flops += flops;
        out[number].kernel_ns += ns;
        ++out[number].ops;
      }
    }
  }
  return out;
}

class RealTraceFloor : public ::testing::TestWithParam<std::string> {};

TEST_P(RealTraceFloor, MatmulFlopsAndKernelTimeMatchTheHandCount) {
  const std::string path = std::string(SOURCE_DIR) + "/../shared/traces/" + GetParam();
  const std::string text = Gunzip(path);
  ASSERT_FALSE(text.empty()) << "cannot read " << path;
  const std::map<int64_t, HandStep> hand = HandCount(nlohmann::json::parse(text));
  auto steps = testing::AnalyzeTraceFile(path);
  ASSERT_TRUE(steps.ok()) << steps.status();
  int compared = 0;
  for (const analysis::StepAnalysis& s : *steps) {
    auto it = hand.find(s.report.step().number());
    if (it == hand.end()) continue;
    uint64_t flops = 0;
    int64_t kernel_ns = 0;
    uint64_t ops = 0;
    for (const v1::WorkBucket& b : s.report.floor().work()) {
      if (b.kind() == v1::WORK_KIND_MEMORY) continue;
      flops += b.flops();
      kernel_ns += b.kernel_ns();
      ops += b.ops();
    }
    SCOPED_TRACE(s.report.step().number());
    EXPECT_GT(it->second.ops, 50) << "a training step has many matmuls";
    EXPECT_EQ(ops, static_cast<uint64_t>(it->second.ops));
    EXPECT_EQ(flops, it->second.flops);
    EXPECT_EQ(kernel_ns, it->second.kernel_ns);
    EXPECT_EQ(s.report.floor().flops_source(), v1::WORK_SOURCE_INPUT_SHAPES);
    EXPECT_DOUBLE_EQ(s.report.floor().achieved_flops_per_s(),
                     static_cast<double>(flops + 0) / (static_cast<double>(s.report.breakdown().wall_ns()) * 1e-9));
    ++compared;
  }
  EXPECT_EQ(compared, 2) << "both ProfilerSteps";
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, RealTraceFloor,
                         ::testing::Values("sampled_rank-0.json.gz", "sampled_rank-1.json.gz"));

}  // namespace
}  // namespace gpuspy
