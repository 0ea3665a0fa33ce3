// Hand-built steps for per-step detector tests: kernels back to back on one stream (or at given
// times), a window, and the breakdown the detectors see (built by BuildStepReport).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/detectors/step_context.h"
#include "analysis/idle_attribution.h"
#include "analysis/step_report.h"

namespace gpuspy::analysis::testing {

inline constexpr const char* kTcGemm =
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>("
    "cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)";
inline constexpr const char* kBmm = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn";
inline constexpr const char* kLayerNorm =
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
    "float, float const*, float const*, float const*, float*, float*, float*)";
inline constexpr const char* kGelu =
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::"
    "TensorIteratorBase&, at::native::GeluType)::{lambda()#2}, at::detail::Array<char*, 2> >(int)";
inline constexpr const char* kDropout =
    "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned int, "
    "1, 4, bool>(at::cuda::detail::TensorInfo<float, unsigned int>)";
inline constexpr const char* kAdd =
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3>)";
inline constexpr const char* kMaskedFill =
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::"
    "masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda(float, bool)#1}> >(int)";
inline constexpr const char* kSoftmax =
    "void (anonymous namespace)::softmax_warp_forward<float, float, float, 9, false, false>("
    "float*, float const*, int, int, int, bool const*, int, bool)";
inline constexpr const char* kFlash =
    "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, "
    "false, false, cutlass::half_t> >(pytorch_flash::Flash_fwd_params)";

class DetectorStep {
 public:
  // Appends a kernel of `ns` right after the previous one (the stream never idles).
  DetectorStep& Then(const std::string& name, int64_t ns) {
    ev_.kernels.push_back({cursor_, cursor_ + ns, ++corr_, strings_.Intern(name),
                           StreamKey{0, 1, 7}, {}, 0});
    cursor_ += ns;
    return *this;
  }
  // Appends a copy of `ns` right after the previous kernel or copy, on the same stream.
  DetectorStep& Copy(CopyKind kind, int64_t ns, uint64_t bytes,
                     MemoryKind host_memory = MemoryKind::kPinned) {
    const bool to_device = kind == CopyKind::kHtoD;
    ev_.memcpys.push_back({cursor_, cursor_ + ns, ++corr_, StreamKey{0, 1, 7}, kind,
                           to_device ? host_memory : MemoryKind::kDevice,
                           to_device ? MemoryKind::kDevice : host_memory, false, bytes, 0, 0});
    cursor_ += ns;
    return *this;
  }
  // A device allocation or free record (CUPTI MEMORY2) at `timestamp_ns`.
  DetectorStep& Memory(MemoryOpKind op, int64_t timestamp_ns, uint64_t bytes) {
    ev_.memory.push_back({timestamp_ns, ++corr_, StreamKey{0, 1, 7}, op, MemoryKind::kDevice,
                          false, 0x7f0000000000 + corr_ * 4096, bytes});
    return *this;
  }
  DetectorStep& Idle(int64_t ns) {
    cursor_ += ns;
    return *this;
  }
  int64_t end_ns() const { return cursor_; }
  // A CUDA call on the host's main thread (kernels get no launch of their own otherwise).
  DetectorStep& Call(const std::string& name, int64_t start_ns, int64_t end_ns,
                     const std::string& call_site = "") {
    ev_.apis.push_back({start_ns, end_ns, ++corr_, ApiDomain::kRuntime, 0, strings_.Intern(name),
                        kMainThread, strings_.Intern(call_site)});
    return *this;
  }
  // A CUDA call on another thread (a pin-memory or NCCL thread).
  DetectorStep& CallOnThread(const std::string& name, int64_t start_ns, int64_t end_ns, uint32_t thread_id) {
    ev_.apis.push_back({start_ns, end_ns, ++corr_, ApiDomain::kRuntime, 0, strings_.Intern(name),
                        thread_id, 0});
    return *this;
  }
  // The CUDA call that issued the last kernel or copy appended (their correlation ids match).
  DetectorStep& IssuedBy(const std::string& name, int64_t start_ns, int64_t end_ns,
                         const std::string& call_site) {
    ev_.apis.push_back({start_ns, end_ns, corr_, ApiDomain::kRuntime, 0, strings_.Intern(name),
                        kMainThread, strings_.Intern(call_site)});
    return *this;
  }
  // A host range (Kineto cpu_op / user_annotation / python_function, or NVTX) on the main thread.
  DetectorStep& Range(std::string_view domain, const std::string& name, int64_t start_ns,
                      int64_t end_ns) {
    ev_.nvtx_ranges.push_back({start_ns, end_ns, strings_.Intern(domain), strings_.Intern(name),
                               kMainThread, 0});
    return *this;
  }
  // A host sample (inject/core/host_sampler.h): the main thread ran `call_site` at `timestamp_ns`.
  DetectorStep& Sample(int64_t timestamp_ns, const std::string& call_site) {
    ev_.nvtx_marks.push_back({timestamp_ns, strings_.Intern(kHostSampleDomain), strings_.Intern(call_site),
                              kMainThread});
    return *this;
  }
  static constexpr uint32_t kMainThread = 4242;

  // Runs `detect` on the window [0, end_ns() or wall_ns).
  template <typename Detector>
  auto Run(Detector detect, int64_t wall_ns = -1) {
    const StepWindow w{1, 0, wall_ns < 0 ? cursor_ : wall_ns, "nvtx:test"};
    report_ = BuildStepReport(ev_, strings_, w, 1);
    window_ = w;
    idle_ = AttributeIdle(ev_, strings_, {w.start_ns, w.end_ns});
    kernels_ = ClassifiedKernels(ev_, strings_, {w.start_ns, w.end_ns}, classes_);
    const StepContext ctx{ev_, strings_, window_, report_.breakdown(), idle_, classes_, kernels_};
    return detect(ctx);
  }
  const v1::StepReport& report() const { return report_; }

 private:
  StringTable strings_;
  EventColumns ev_;
  uint64_t corr_ = 0;
  int64_t cursor_ = 0;
  StepWindow window_;
  v1::StepReport report_;
  KernelClasses classes_;
  std::vector<ClassifiedKernel> kernels_;
  IdleAttribution idle_;
};

inline std::string Evidence(const v1::Finding& f, const std::string& key) {
  for (const auto& e : f.evidence()) {
    if (e.key() == key) return e.value();
  }
  return "";
}

}  // namespace gpuspy::analysis::testing
