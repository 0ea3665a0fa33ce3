// The what-if gains on the shared 2021 ResNet-50 trace (PyTorch 1.8's autograd profiler, a V100,
// FP32, 4 data-loader workers) against hand computations from the trace's own events, not
// against the analysis's output:
//   - fp32_gemm (FP32 SIMT convolutions and GEMMs 2x faster): the GPU saves half their time, but
//     each step starts by uploading its input from pageable memory, a copy that waits for the
//     GPU to drain: the host is only as far ahead as it waited there, so the step saves
//     min(SIMT time / 2, the host's wait in that copy);
//   - host_bound (the named host range costs nothing: SGD.zero_grad, whose per-parameter fills
//     the GPU idles through after that copy drained it): the step saves the GPU's idle time
//     during zero_grad;
//   - alloc_churn: never more than the step's time in allocator calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "analysis/detector_names.h"
#include "analysis/intervals.h"
#include "analysis/step_series.h"
#include "importers/kineto/kineto_reader.h"
#include "tests/support/analyzed_trace.h"

namespace gpuspy {
namespace {

using analysis::Interval;
using analysis::IntervalSet;

constexpr char kTrace[] = "resnet50_2021_autograd_nw4.json.gz";
constexpr double kMaxRelativeError = 0.25;
constexpr int64_t kMaxAbsoluteErrorNs = 1'000'000;

struct Step {
  int64_t number, start_ns, end_ns;
  absl::flat_hash_map<std::string, int64_t> gain;  // by detector
};

// The hand's view of the trace's events.
struct Hand {
  const importers::KinetoTrace& t;
  uint32_t main_thread = 0;  // the thread with the most CUDA calls

  std::string Name(StringRef r) const { return std::string(t.strings.Get(r)); }

  // FP32 on CUDA cores by the libraries' own names: cuBLAS sgemm, cuDNN's scudnn and
  // implicit_convolve_sgemm.
  static bool IsSimtFp32(std::string name) {
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return absl::StrContains(name, "sgemm") || absl::StrContains(name, "scudnn");
  }
  int64_t SimtNs(const Step& s) const {
    int64_t ns = 0;
    for (const KernelEvent& k : t.events.kernels) {
      if (k.start_ns >= s.start_ns && k.start_ns < s.end_ns && IsSimtFp32(Name(k.name))) ns += k.end_ns - k.start_ns;
    }
    return ns;
  }
  // The main thread's wait in pageable uploads: the call's time beyond its copy's.
  int64_t PageableWaitNs(const Step& s) const {
    absl::flat_hash_map<uint64_t, const MemcpyEvent*> copies;
    for (const MemcpyEvent& m : t.events.memcpys) {
      if (m.src_kind == MemoryKind::kPageable) copies[m.correlation_id] = &m;
    }
    int64_t ns = 0;
    for (const ApiEvent& a : t.events.apis) {
      if (a.thread_id != main_thread || a.start_ns < s.start_ns || a.start_ns >= s.end_ns) continue;
      auto it = copies.find(a.correlation_id);
      if (it == copies.end()) continue;
      ns += std::max<int64_t>(0, (a.end_ns - a.start_ns) - (it->second->end_ns - it->second->start_ns));
    }
    return ns;
  }
  IntervalSet GpuBusy() const {
    std::vector<Interval> busy;
    for (const KernelEvent& k : t.events.kernels) busy.push_back({k.start_ns, k.end_ns});
    for (const MemcpyEvent& m : t.events.memcpys) busy.push_back({m.start_ns, m.end_ns});
    for (const MemsetEvent& m : t.events.memsets) busy.push_back({m.start_ns, m.end_ns});
    return IntervalSet::Union(std::move(busy));
  }
  // The GPU's idle time while the host ran a range named `prefix...` in the step.
  int64_t IdleDuringNs(const Step& s, const std::string& prefix) const {
    std::vector<Interval> ranges;
    for (const NvtxRangeEvent& r : t.events.nvtx_ranges) {
      if (r.start_ns >= s.start_ns && r.start_ns < s.end_ns && absl::StartsWith(Name(r.message), prefix)) {
        ranges.push_back({r.start_ns, r.end_ns});
      }
    }
    const IntervalSet during = IntervalSet::Union(std::move(ranges));
    return during.TotalLength() - during.Intersect(GpuBusy()).TotalLength();
  }
  int64_t AllocatorCallNs(const Step& s) const {
    int64_t ns = 0;
    for (const ApiEvent& a : t.events.apis) {
      const std::string name = Name(a.name);
      if (a.start_ns >= s.start_ns && a.start_ns < s.end_ns && (name == "cudaMalloc" || name == "cudaFree")) {
        ns += a.end_ns - a.start_ns;
      }
    }
    return ns;
  }
};

void ExpectNear(int64_t replayed, int64_t hand, const std::string& what) {
  const double tolerance = std::max<double>(kMaxAbsoluteErrorNs, kMaxRelativeError * static_cast<double>(hand));
  EXPECT_NEAR(static_cast<double>(replayed), static_cast<double>(hand), tolerance) << what;
}

TEST(ResNet2021Gains, EachFindingsReplayedGainMatchesAHandComputationFromTheEvents) {
  const std::string path = std::string(SOURCE_DIR) + "/../shared/traces/" + kTrace;
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  absl::StatusOr<importers::KinetoTrace> trace = importers::ReadKinetoTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  absl::StatusOr<std::vector<analysis::StepAnalysis>> analysed = testing::AnalyzeTraceFile(path);
  ASSERT_TRUE(analysed.ok()) << analysed.status();

  Hand hand{*trace};
  absl::flat_hash_map<uint32_t, int> calls;
  for (const ApiEvent& a : trace->events.apis) ++calls[a.thread_id];
  for (const auto& [tid, n] : calls) {
    if (n > calls[hand.main_thread]) hand.main_thread = tid;
  }

  int fp32_checked = 0, host_checked = 0;
  for (const analysis::StepAnalysis& a : *analysed) {
    const v1::StepReport& r = a.report;
    if (!r.steady_state()) continue;
    Step s{r.step().number(), r.step().start_ns(), r.step().end_ns(), {}};
    for (const v1::Finding& f : r.findings()) {
      ASSERT_TRUE(f.has_what_if()) << analysis::DetectorName(f.detector());
      s.gain[analysis::DetectorName(f.detector())] = f.what_if().gain_ns();
    }
    const std::string step = "step " + std::to_string(s.number);
    ASSERT_TRUE(s.gain.contains("fp32_gemm")) << step;
    const int64_t half_simt = hand.SimtNs(s) / 2, waited = hand.PageableWaitNs(s);
    std::printf("%s: fp32_gemm replayed %.2f ms; by hand: SIMT/2 %.2f ms, host's wait %.2f ms\n",
                step.c_str(), s.gain["fp32_gemm"] / 1e6, half_simt / 1e6, waited / 1e6);
    EXPECT_GT(half_simt, 10'000'000) << step;  // FP32 convolutions fill the device
    EXPECT_LE(s.gain["fp32_gemm"], half_simt) << step;
    // The last step's upload precedes its window (its period is cut at its first launch).
    if (waited > 0) {
      ExpectNear(s.gain["fp32_gemm"], std::min(half_simt, waited), step + " fp32_gemm");
      ++fp32_checked;
    }
    if (s.gain.contains("host_bound")) {
      const int64_t idle = hand.IdleDuringNs(s, "Optimizer.zero_grad");
      std::printf("%s: host_bound replayed %.2f ms; by hand: GPU idle in zero_grad %.2f ms\n", step.c_str(),
                  s.gain["host_bound"] / 1e6, idle / 1e6);
      ExpectNear(s.gain["host_bound"], idle, step + " host_bound");
      ++host_checked;
    }
    if (s.gain.contains("alloc_churn")) {
      EXPECT_LE(s.gain["alloc_churn"], hand.AllocatorCallNs(s)) << step;
    }
  }
  EXPECT_GE(fp32_checked, 3);
  EXPECT_GE(host_checked, 1);
}

}  // namespace
}  // namespace gpuspy
