#include "tools/replay/shape_bodies.h"

#include <algorithm>

namespace gpuspy::synthetic {
namespace {

// The model: 60 kernels, every third a 600 us tensor-core GEMM, the rest 200 us: ~20 ms of GPU
// work launched in ~1.3 ms. kClipPerParam*'s is smaller (~7 ms: 200 us GEMMs, 80 us others), so
// that the clipping loop's host time, not the GPU, sets the fixed twin's pace too.
constexpr int kModelKernels = 60;
constexpr int64_t kGemmNs = 600 * kUs;
constexpr int64_t kOtherNs = 200 * kUs;
constexpr int64_t kSmallGemmNs = 200 * kUs;
constexpr int64_t kSmallOtherNs = 80 * kUs;
constexpr int64_t kPerOpPythonNs = 15 * kUs;
// collate_fn and augmentation on the main thread before the first launch: the GPU idles through
// it whenever the step before ended in a sync.
constexpr int64_t kCollateNs = 1500 * kUs;

// kEmptyCache*: empty_cache() gave every segment back, so each activation's first use in the
// forward asks the driver for a fresh one (cudaMalloc of a 64 MiB segment: ~150 us of host),
// and empty_cache() synchronizes, then frees them one by one (~8 us of allocator bookkeeping
// between two cudaFree calls).
constexpr int kMallocEveryKernels = 5;
constexpr uint64_t kSegmentBytes = 64ull << 20;
constexpr int64_t kSegmentMallocNs = 150 * kUs;
constexpr int64_t kFreeBookkeepingNs = 8 * kUs;
// kEmptyCacheGc: gc.collect() before it, longer than the step's GPU work: the host's own work
// sets the pace, and the fix (no empty_cache()) keeps it.
constexpr int64_t kGcCollectNs = 25 * kMs;

// kItemMetrics: metrics on the loss value after .item() (logging, a running average in Python);
// kItemLongMetrics: metrics that outlast the GPU's work (an evaluation pass on the CPU).
constexpr int64_t kMetricsNs = 3 * kMs;
constexpr int64_t kLongMetricsNs = 30 * kMs;

// kClipPerParam*: clip_grad_norm_ written as a loop over a transformer's 300 parameters, 75
// layers of a weight matrix (its norm ~40 us, its scaling ~45 us on the GPU), a bias and a
// LayerNorm's weight and bias (tiny: ~5 and ~3 us): a norm each (~25 us of Python and dispatch:
// detach, vector_norm, the list append), then, once the total is known, a mul_ each (~18 us).
// The fixed twin is clip_grad_norm_(foreach=True): one multi_tensor_apply launch per 128
// tensors for the norms and for the scaling, doing the same memory traffic.
constexpr int kParams = 300;
constexpr int kParamsPerLayer = 4;  // the first of each layer is its weight matrix
constexpr int64_t kNormPythonNs = 25 * kUs;
constexpr int64_t kMulPythonNs = 18 * kUs;
constexpr int64_t kNormKernelNs = 5 * kUs;
constexpr int64_t kMulKernelNs = 3 * kUs;
constexpr int64_t kWeightNormKernelNs = 40 * kUs;
constexpr int64_t kWeightMulKernelNs = 45 * kUs;
constexpr int64_t kTinyFixedNs = 2 * kUs;  // each kernel's fixed cost, paid once when fused
constexpr int kTensorsPerForeachLaunch = 128;
constexpr int64_t kForeachPythonNs = 60 * kUs;
// kClipPerParamPython: every 10th parameter also logs a statistic on the CPU (~400 us of Python);
// the fused clip keeps that loop.
constexpr int kLoggedEveryParams = 10;
constexpr int64_t kLoggingPythonNs = 400 * kUs;

constexpr const char* kNormKernel =
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::NormTwoOps<"
    "float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::"
    "NormTwoOps<float, float, float>, unsigned int, float, 4>)";
constexpr const char* kMulKernel =
    "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, "
    "float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2> >(int, "
    "at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> "
    ">, at::detail::Array<char*, 2>)";
constexpr const char* kForeachNormKernel =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::LpNormFunctor<float, "
    "(at::native::(anonymous namespace)::NormType)1, float, float>, float*, int>";
constexpr const char* kForeachMulKernel =
    "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
    "namespace)::TensorListMetadata<1>, at::native::(anonymous namespace)::"
    "BinaryOpScalarTensorFunctor<float, 1, 1, 0>, std::multiplies<float>, float*>";

void Model(Scenario s, bool fixed, double slow, Timeline& t, ShapeState& state) {
  const bool churn = (s == Scenario::kEmptyCache || s == Scenario::kEmptyCacheGc) && !fixed;
  const StringRef site = t.Site("train.py:64 forward");
  const bool small = s == Scenario::kClipPerParam || s == Scenario::kClipPerParamPython;
  const int64_t gemm_ns = small ? kSmallGemmNs : kGemmNs, other_ns = small ? kSmallOtherNs : kOtherNs;
  for (int i = 0; i < kModelKernels; ++i) {
    if (churn && i % kMallocEveryKernels == 0) {
      state.blocks.push_back(t.Malloc(kSegmentBytes, site, kSegmentMallocNs));
    }
    const bool gemm = i % 3 == 0;
    t.Launch(gemm ? kTensorCoreGemms[i % 3] : kElementwise[i % 4],
             static_cast<int64_t>((gemm ? gemm_ns : other_ns) * slow));
    t.HostWork(kPerOpPythonNs);
  }
}

// One op per parameter (`weight_ns` for a layer's weight matrix, `tiny_ns` for the others), or,
// fused, one launch per kTensorsPerForeachLaunch doing their work less each one's fixed cost.
void PerTensorOps(bool fused, const char* kernel, const char* foreach_kernel, int64_t python_ns,
                  int64_t weight_ns, int64_t tiny_ns, bool logging, Timeline& t) {
  const auto op_ns = [&](int p) { return p % kParamsPerLayer == 0 ? weight_ns : tiny_ns; };
  for (int p = 0; p < kParams; ++p) {
    if (logging && p % kLoggedEveryParams == 0) t.HostWork(kLoggingPythonNs);
    if (!fused) {
      t.HostWork(python_ns);
      t.Launch(kernel, op_ns(p));
    } else if (p % kTensorsPerForeachLaunch == 0) {
      int64_t work = kTinyFixedNs;
      for (int q = p; q < std::min(kParams, p + kTensorsPerForeachLaunch); ++q) work += op_ns(q) - kTinyFixedNs;
      t.HostWork(kForeachPythonNs);
      t.Launch(foreach_kernel, work);
    }
  }
}

void ClipGradients(bool fixed, bool logging, Timeline& t) {
  PerTensorOps(fixed, kNormKernel, kForeachNormKernel, kNormPythonNs, kWeightNormKernelNs,
               kNormKernelNs, logging, t);
  // The total norm and the clip coefficient: stack, norm, clamp.
  for (int i = 0; i < 3; ++i) {
    t.HostWork(20 * kUs);
    t.Launch(i == 1 ? kNormKernel : kElementwise[0], 4 * kUs);
  }
  PerTensorOps(fixed, kMulKernel, kForeachMulKernel, kMulPythonNs, kWeightMulKernelNs,
               kMulKernelNs, false, t);
}

}  // namespace

bool IsWhatIfShape(Scenario s) {
  const std::vector<Scenario> shapes = WhatIfShapeScenarios();
  return std::find(shapes.begin(), shapes.end(), s) != shapes.end();
}

bool ShapeReadsLossEveryStep(Scenario s) {
  return s == Scenario::kClipPerParam || s == Scenario::kClipPerParamPython;
}

void ShapeBody(Scenario s, bool fixed, double slow, Timeline& t, ShapeState& state) {
  t.HostWork(kCollateNs);
  Model(s, fixed, slow, t, state);
  if (s == Scenario::kClipPerParam || s == Scenario::kClipPerParamPython) {
    ClipGradients(fixed, s == Scenario::kClipPerParamPython, t);
  }
}

void ShapeStepEnd(Scenario s, bool fixed, Timeline& t, ShapeState& state) {
  switch (s) {
    case Scenario::kEmptyCache:
    case Scenario::kEmptyCacheGc:
      if (s == Scenario::kEmptyCacheGc) t.HostWork(kGcCollectNs);
      if (fixed) return;
      // torch.cuda.empty_cache(): the allocator synchronizes, then gives each segment back.
      t.DeviceSync(t.Site("train.py:102 train_step"));
      for (uint64_t b : state.blocks) {
        t.HostWork(kFreeBookkeepingNs);
        t.Free(b);
      }
      state.blocks.clear();
      return;
    case Scenario::kItemMetrics:
    case Scenario::kItemLongMetrics:
      // Fixed: the loss accumulates on the GPU and is read every N steps; the metrics code stays.
      if (!fixed) t.Item(t.Site("train.py:97 train_step"));
      t.HostWork(s == Scenario::kItemMetrics ? kMetricsNs : kLongMetricsNs);
      return;
    default:
      return;
  }
}

}  // namespace gpuspy::synthetic
