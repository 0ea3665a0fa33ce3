#include "tools/replay/step_bodies.h"

#include <algorithm>
#include <random>
#include <utility>

namespace gpuspy::synthetic {
namespace {

// Single-process scenarios in a job of several ranks: DDP's gradients all-reduced in one bucket
// after backward (a ~50M-parameter FP32 model).
constexpr uint64_t kSingleBucketGradientBytes = 200ull << 20;

// kStraggler*: a GPU-bound model whose ~100 MiB of gradients go out in 4 DDP buckets (DDP's
// default bucket is 25 MiB), the first three overlapped with backward, the last after it.
constexpr int kStragglerBuckets = 4;
constexpr uint64_t kStragglerBucketBytes = 25ull << 20;
constexpr int kForwardKernels = 40;
constexpr int kBackwardKernelsPerBucket = 20;

// kExposedComm: a lighter model (~13.5 ms of compute) with ~400 MiB of gradients in one
// all-reduce after backward (bucketing off / a final flat all-reduce): at 4 ranks and
// 100 GB/s busBw it takes ~6.3 ms, ~30% of the step, with no compute to hide it.
constexpr uint64_t kExposedAllReduceBytes = 400ull << 20;
constexpr int kExposedComputeKernels = 40;

// kCommStorm: one tiny all-reduce per parameter (bucketing disabled, or a custom loop calling
// dist.all_reduce per tensor): 400 per step, 16-64 KiB each, each costing NCCL's fixed latency.
constexpr int kStormAllReduces = 400;
constexpr uint64_t kStormMinBytes = 16ull << 10;
constexpr uint64_t kStormMaxBytes = 64ull << 10;
constexpr int kStormForwardKernels = 30;
// A backward kernel per parameter, shorter than a collective's latency: communication, not
// compute, sets the pace.
constexpr int64_t kStormBackwardKernelNs = 20 * kUs;

// kUnfusedMlp: 16 eager layers, each a tensor-core GEMM followed by LayerNorm → GELU → dropout
// → add; the tail (4 × 150 µs) outweighs the GEMM (500 µs): 55 % of GPU time memory-bound.
constexpr int kMlpLayers = 16;
constexpr int64_t kMlpGemmNs = 500 * kUs;
constexpr int64_t kMlpTailKernelNs = 150 * kUs;

// kEagerAttention: 12 layers of QKV GEMM, bmm → masked_fill → softmax → dropout → bmm, output
// GEMM, add, LayerNorm; memory-bound kernels ~38 % of GPU time (below unfused_elementwise's
// share), the attention pattern ~48 %.
constexpr int kAttentionLayers = 12;

// kLaunchStorm: per-parameter elementwise kernels of 3 µs; of each, ~2 µs is the kernel's fixed
// cost (ramp-up and tail), so the fixed twin's fused launches do the rest of their work.
constexpr int kStormKernels = 2500;
constexpr int64_t kStormKernelNs = 3 * kUs;
constexpr int64_t kTinyKernelFixedNs = 2 * kUs;
constexpr int kStormFusedKernels = 128;
// kFp32Gemm's fixed twin: TF32 GEMMs this much faster than the FP32 SIMT ones.
constexpr int64_t kFp32FixedSpeedup = 2;

// kHostBound: Python mid-step, longer than the GPU work queued ahead of it.
constexpr int64_t kHostBoundPythonNs = 60 * kMs;
constexpr int64_t kHostSamplePeriodNs = 5 * kMs;  // GPUSPY_HOST_SAMPLE_HZ's default, 200

// The single-process scenarios' forward/backward (their pathology is in the kernels, syncs and
// copies; the multi-rank scenarios have their own bodies in ComputeSegment).
void SingleProcessBody(Scenario scenario, bool fixed, double slow, Timeline& t) {
  // The fixed twins of the fusion scenarios are their fused controls.
  if (fixed && scenario == Scenario::kUnfusedMlp) scenario = Scenario::kCompiledMlp;
  if (fixed && scenario == Scenario::kEagerAttention) scenario = Scenario::kSdpaAttention;
  switch (scenario) {
    case Scenario::kHealthy:
    case Scenario::kAllocChurn:
    case Scenario::kMemoryLeak:
    case Scenario::kInputStall:
    case Scenario::kHostBound:
    default:  // (not reached by the multi-rank scenarios)
      for (int i = 0; i < 120; ++i) {
        const bool gemm = i % 3 == 0;
        t.Launch(gemm ? kTensorCoreGemms[i % 3] : kElementwise[i % 4],
                 static_cast<int64_t>((gemm ? 900 : 250) * kUs * slow));
        t.HostWork(15 * kUs);
        if (scenario == Scenario::kHostBound && i == 60 && !fixed) {
          // Python between two halves of the model (metrics on CPU tensors, a Python loop):
          // longer than the ~27 ms of GPU work queued ahead, so the GPU runs dry. The user's
          // NVTX range around it names it, and the host sampler (200 Hz) its lines: mostly the
          // loop, sometimes the logging after it.
          const int64_t start = t.host();
          t.HostWork(kHostBoundPythonNs);
          t.Range("compute_metrics", start, t.host(), 1);
          int n = 0;
          for (int64_t at = start + kHostSamplePeriodNs / 2; at < t.host(); at += kHostSamplePeriodNs, ++n) {
            t.Sample(at, n % 4 == 3 ? "train.py:75 compute_metrics \u2190 train.py:48 train_step"
                                    : "train.py:72 compute_metrics \u2190 train.py:48 train_step");
          }
        }
      }
      break;
    case Scenario::kFp32Gemm:
      for (int i = 0; i < 60; ++i) {
        const bool gemm = i % 2 == 0;
        // Fixed: TF32 on tensor cores (kFp32FixedSpeedup faster).
        const char* name = gemm ? (fixed ? kTensorCoreGemms[i % 3] : kSimtGemms[i % 3]) : kElementwise[i % 4];
        t.Launch(name, static_cast<int64_t>((gemm ? 1500 / (fixed ? kFp32FixedSpeedup : 1) : 60) * kUs * slow));
        t.HostWork(15 * kUs);
      }
      break;
    case Scenario::kSyncStall:
      for (int i = 0; i < 48; ++i) {
        t.Launch(i % 4 == 0 ? kTensorCoreGemms[i % 3] : kElementwise[i % 4],
                 static_cast<int64_t>(200 * kUs * slow));
        t.HostWork(15 * kUs);
        if (i % 4 == 3 && fixed) {
          // Fixed: the value stays on the GPU (read every N steps); the Python after it stays.
          t.HostWork(500 * kUs);
        } else if (i % 4 == 3) {
          // e.g. print(loss.item()) / metrics.append(acc.item()), with its line as live capture
          // records a blocking call's site.
          t.Item(t.Site("train.py:57 train_step"));
          // Python on the value (logging, formatting), shorter than the ~740 us of GPU work the
          // .item() waited for: without the wait it would have run while the GPU worked, so the
          // idle after the sync is the sync's cost (idle_attribution.h, the drain). Longer Python
          // would be host work the sync did not cause.
          t.HostWork(500 * kUs);
        }
      }
      break;
    case Scenario::kUnfusedMlp:
      for (int layer = 0; layer < kMlpLayers; ++layer) {
        t.Launch(kTensorCoreGemms[layer % 3], static_cast<int64_t>(kMlpGemmNs * slow));
        t.HostWork(15 * kUs);
        for (const char* k : kMlpTail) {
          t.Launch(k, static_cast<int64_t>(kMlpTailKernelNs * slow));
          t.HostWork(15 * kUs);
        }
      }
      break;
    case Scenario::kEagerAttention:
      for (int layer = 0; layer < kAttentionLayers; ++layer) {
        const std::pair<const char*, int64_t> kernels[] = {
            {kTensorCoreGemms[0], 400 * kUs}, {kBatchedGemm, 200 * kUs},
            {kMaskedFill, 150 * kUs},         {kSoftmax, 250 * kUs},
            {kMlpTail[2], 150 * kUs},         {kBatchedGemm, 200 * kUs},
            {kTensorCoreGemms[1], 400 * kUs}, {kMlpTail[3], 100 * kUs},
            {kMlpTail[0], 100 * kUs}};
        for (const auto& [name, ns] : kernels) {
          t.Launch(name, static_cast<int64_t>(ns * slow));
          t.HostWork(15 * kUs);
        }
      }
      break;
    case Scenario::kCompiledMlp:
      // The tail's four memory passes fused into one: a single pass over the activations.
      for (int layer = 0; layer < kMlpLayers; ++layer) {
        t.Launch(kTensorCoreGemms[layer % 3], static_cast<int64_t>(kMlpGemmNs * slow));
        t.HostWork(15 * kUs);
        t.Launch(kTritonFusedTail, static_cast<int64_t>(kMlpTailKernelNs * slow));
        t.HostWork(15 * kUs);
      }
      break;
    case Scenario::kSdpaAttention:
      for (int layer = 0; layer < kAttentionLayers; ++layer) {
        const std::pair<const char*, int64_t> kernels[] = {
            {kTensorCoreGemms[0], 400 * kUs}, {kFlashAttention, 300 * kUs},
            {kTensorCoreGemms[1], 400 * kUs}, {kMlpTail[3], 100 * kUs},
            {kMlpTail[0], 100 * kUs}};
        for (const auto& [name, ns] : kernels) {
          t.Launch(name, static_cast<int64_t>(ns * slow));
          t.HostWork(15 * kUs);
        }
      }
      break;
    case Scenario::kLaunchStorm:
      if (fixed) {
        // Fused: one foreach-style launch per kStormFusedKernels tensors, doing their work less
        // each tiny kernel's fixed cost.
        for (int i = 0; i < kStormKernels; i += kStormFusedKernels) {
          const int n = std::min(kStormFusedKernels, kStormKernels - i);
          t.Launch(kOptimizer, static_cast<int64_t>((n * (kStormKernelNs - kTinyKernelFixedNs) +
                                                         kTinyKernelFixedNs) * slow));
          t.HostWork(6 * kUs);
        }
        break;
      }
      for (int i = 0; i < kStormKernels; ++i) {
        t.Launch(kElementwise[i % 4], static_cast<int64_t>(kStormKernelNs * slow));
        t.HostWork(6 * kUs);
      }
      break;
    case Scenario::kCopyHeavy:
      for (int i = 0; i < 20; ++i) {
        t.Launch(kTensorCoreGemms[i % 3], static_cast<int64_t>(300 * kUs * slow));
        t.HostWork(15 * kUs);
      }
      break;
  }
}

// `count` kernels of the healthy mix (every third a tensor-core GEMM), numbered from `first`.
void HealthyKernels(int first, int count, int64_t gemm_ns, int64_t other_ns, double slow,
                    Timeline& t) {
  for (int i = first; i < first + count; ++i) {
    const bool gemm = i % 3 == 0;
    t.Launch(gemm ? kTensorCoreGemms[i % 3] : kElementwise[i % 4],
             static_cast<int64_t>((gemm ? gemm_ns : other_ns) * slow));
    t.HostWork(15 * kUs);
  }
}

}  // namespace

std::vector<uint64_t> StepAllReduces(Scenario scenario, int ranks, uint64_t seed) {
  switch (scenario) {
    case Scenario::kStragglerCompute:
    case Scenario::kStragglerInput:
      return std::vector<uint64_t>(kStragglerBuckets, kStragglerBucketBytes);
    case Scenario::kExposedComm:
      return {kExposedAllReduceBytes};
    case Scenario::kCommStorm: {
      // Parameter sizes: fixed by the model, so the same on every rank and step.
      std::mt19937_64 rng(seed);
      std::uniform_int_distribution<uint64_t> kib(kStormMinBytes >> 10, kStormMaxBytes >> 10);
      std::vector<uint64_t> sizes;
      for (int i = 0; i < kStormAllReduces; ++i) sizes.push_back(kib(rng) << 10);
      return sizes;
    }
    default:
      if (ranks <= 1) return {};
      return {kSingleBucketGradientBytes};
  }
}

int ComputeSegments(Scenario scenario, int ranks, uint64_t seed) {
  return std::max<int>(1, static_cast<int>(StepAllReduces(scenario, ranks, seed).size()));
}

void ComputeSegment(const StepContext& c, int segment, Timeline& t) {
  const double slow = c.warmup ? kWarmupSlowdown : 1.0;
  switch (c.scenario) {
    case Scenario::kStragglerCompute:
    case Scenario::kStragglerInput:
      // Forward before the first bucket's backward; each segment ends when a bucket is ready.
      if (segment == 0) HealthyKernels(0, kForwardKernels, 900 * kUs, 250 * kUs, slow, t);
      HealthyKernels(kForwardKernels + segment * kBackwardKernelsPerBucket,
                     kBackwardKernelsPerBucket, 900 * kUs, 250 * kUs, slow, t);
      return;
    case Scenario::kExposedComm:
      HealthyKernels(0, kExposedComputeKernels, 600 * kUs, 200 * kUs, slow, t);
      return;
    case Scenario::kCommStorm:
      if (segment == 0) HealthyKernels(0, kStormForwardKernels, 600 * kUs, 150 * kUs, slow, t);
      t.Launch(kElementwise[segment % 4], static_cast<int64_t>(kStormBackwardKernelNs * slow));
      t.HostWork(8 * kUs);
      return;
    default:
      SingleProcessBody(c.scenario, c.fixed, slow, t);
      return;
  }
}

}  // namespace gpuspy::synthetic
