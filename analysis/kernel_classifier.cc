#include "analysis/kernel_classifier.h"

#include <array>
#include <cctype>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "analysis/text_form.h"

namespace gpuspy::analysis {
namespace {

// How a rule's markers (lower-case substrings) must appear in the lower-cased name.
enum class Match {
  kPrefix,                       // the name starts with a marker
  kTensileInputType,             // a Tensile GEMM whose input data type starts with a marker
  kAny,                          // the name contains a marker
  kAnyInMathKernel,              // ... and is a GEMM/conv kernel
  kAnyInMathKernelWithoutTcType, // ... and is a GEMM/conv kernel naming no reduced-precision type
  kFunctionIs,                   // the kernel's own function name (no namespace, template
                                 // arguments or parameters) is a marker
  kInductorTemplateOf,           // an Inductor template kernel (triton_tem_fused_<ops>_<n>) one of
                                 // whose ops is a marker
};

struct Rule {
  KernelClass cls;
  Match match;
  absl::Span<const absl::string_view> markers;
};

// Collective communication: NCCL (and AMD's RCCL, Microsoft's MSCCL), NVSHMEM, and DeepEP's
// expert-parallel all-to-all kernels (deep_ep::intranode::dispatch/combine, internode::…), which
// run on a side stream beside the experts' GEMMs.
// Low-latency mode is its own namespace (deep_ep::internode_ll::dispatch; the same name in DeepEP's
// forks, nccl_ep:: and mscclpp::ep::), which "internode::" does not reach.
constexpr absl::string_view kNccl[] = {"nccl",        "rccl",        "msccl",         "nvshmem",
                                       "deep_ep",     "deepep",      "intranode::",   "internode::",
                                       "internode_ll::"};
// Inductor's GEMM templates (max-autotune) are named after the ATen ops they compute, with the
// ops fused into their prologue and epilogue: "triton_tem_fused_mm_0", "triton_tem_fused_addmm_1",
// "triton_tem_fused_bmm_7", "triton_tem_fused__to_copy_addmm_gelu_t_view_9",
// "triton_tem_fused__to_copy_convolution_repeat_unsqueeze_view_2". They are tl.dot loops, MMA on
// tensor cores for the bf16/fp16/fp8 inputs training runs them with (an FP32 template without
// TF32 would be FMA: its name cannot say so). Other templates (flex_attention, or
// "triton_tem_fused_0" when Inductor's descriptive names are off) stay Triton kernels.
constexpr absl::string_view kInductorGemmOps[] = {"mm", "addmm", "bmm", "baddbmm", "convolution"};
// torch.compile's Inductor names its Triton kernels triton_{poi,per,red,tem}_fused_...; older
// Triton "triton__0d1d2d". Each is already a fusion of several ops (its GEMM templates are
// GEMMs first: kInductorGemmOps).
constexpr absl::string_view kTritonPrefix[] = {"triton"};
// Fused attention: flash-attention (flash_fwd_kernel, flash_bwd_*, FA3 flash::FlashAttnFwdSm90),
// PyTorch's mem-efficient kernels (fmha_cutlassF/B, AttentionKernel), xformers
// (efficient_attention), TensorRT fmha_v2, cuDNN's SDPA graphs (…sdpa…).
constexpr absl::string_view kAttention[] = {
    "flash_fwd", "flash_bwd", "flashattn", "flash_attn", "fmha", "efficient_attention",
    "attentionkernel", "attention_kernel", "sdpa", "multihead_attention"};
// cuBLAS/CUTLASS kernels that say outright their math is FP32 FMA on CUDA cores, even inside an
// "xmma" family name ("sm80_xmma_gemm_f32f32_..._ffma_...", "cutlass_simt_sgemm_...").
constexpr absl::string_view kExplicitSimt[] = {"ffma", "_simt_"};
// AMD's rocBLAS and hipBLASLt GEMMs are Tensile kernels named by a fixed grammar:
// "Cijk_Ailk_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_…" — the output and input
// index orders, then the data types (input, output, compute: "BBS" bf16 in, bf16 out, FP32
// compute; "HHS" half; "F8F8S"/"F8HS" FP8; "I8I" int8; "SB"/"SS" FP32; "DB" double), then
// tuning parameters ("MT" macro tile, "MI" the matrix-core instruction, absent on VALU kernels).
// Reduced-precision inputs run on the matrix cores (MFMA, AMD's tensor cores). FP32 inputs are
// FP32 math even where an FP32 MFMA runs them: at a fraction of the bf16 rate, the case
// `fp32_gemm` exists for.
constexpr absl::string_view kTensileReducedInputs[] = {"h", "b", "f8", "i8", "4xi8", "x"};
constexpr absl::string_view kTensileFp32Inputs[] = {"s", "d", "c", "z"};
// Substrings library kernel names carry when the math runs on tensor cores. Volta's HMMA
// kernels are "h884"/"s884" (8x8x4 MMA: half or float accumulate).
// cuBLAS 12's Hopper GEMMs are "nvjet_…" kernels. On AMD GPUs the matrix cores are MFMA
// ("mfma"); Composable Kernel and MIOpen name their MFMA kernels "xdl"/"xdlops"
// ("kernel_gemm_xdl_cshuffle_v3", "gridwise_convolution_implicit_gemm_v4r4_xdlops").
// Composable Kernel's grouped GEMMs end in "xdl" ("kernel_grouped_gemm_xdl<…>",
// include/ck/tensor_operation/gpu/device/impl/device_grouped_gemm_xdl.hpp), hence "gemm_xdl".
constexpr absl::string_view kTensorCoreMarkers[] = {
    "hmma",  "wgmma", "gmma", "tensorop", "xmma",   "s1688", "s16816",  "h1688",   "h16816",
    "i8816", "h884",  "s884", "nvjet",    "mfma",   "xdlops", "_xdl_",  "gemm_xdl"};
// Small setup kernels that grouped (MoE) GEMM libraries launch before the GEMM: one block writes
// the per-expert pointer, shape and stride arrays. Their names and template arguments say "gemm"
// and bf16/fp8, yet they do no math; counted as GEMMs they would inflate the GEMM share.
// PyTorch's torch._grouped_mm (aten/src/ATen/native/cuda/GroupMMCommon.cuh), vLLM's and SGLang's
// CUTLASS MoE (csrc/quantization/cutlass_w8a8/moe/get_group_starts.cuh), tgale96/grouped_gemm
// (csrc/fill_arguments.cuh, whose template argument is CUTLASS's GemmGrouped<…>::Arguments; and
// in csrc/grouped_gemm.cu the k=0 workarounds IgnoreK0Problems and ZeroOutK0Outputs, a zero fill).
constexpr absl::string_view kGemmSetup[] = {"prepare_grouped_gemm_data", "get_group_gemm_starts",
                                            "fillarguments", "ignorek0problems",
                                            "zerooutk0outputs"};
// MoE and quantised GEMM kernels whose own names carry no GEMM word:
// - Marlin's mixed-precision GEMMs (mma.sync on tensor cores): vLLM's marlin::Marlin<…> and
//   marlin_moe_wna16::Marlin<…> (csrc/quantization/gptq_marlin/marlin_template.h,
//   csrc/moe/marlin_moe_wna16/marlin_template.h), the 2:4 sparse marlin_24::Marlin_24<…>; not
//   gptq_marlin_repack_kernel / awq_marlin_repack_kernel, which only reorder weights once.
// - vLLM's and SGLang's Triton MoE GEMMs, named by their Python functions in traces
//   (vllm/model_executor/layers/fused_moe/fused_moe.py, fused_batched_moe.py;
//   sglang/srt/layers/moe/fused_moe_triton/fused_moe_triton_kernels.py): tl.dot over bf16/fp16/
//   fp8/int8 operands, MMA on tensor cores from Ampere on.
constexpr absl::string_view kNamedMoeGemms[] = {"marlin", "marlin_24", "fused_moe_kernel",
                                                "fused_moe_kernel_gptq_awq",
                                                "batched_triton_kernel"};
// DeepGEMM kernels (deepseek-ai/DeepGEMM, deep_gemm/include/deep_gemm/impls/) whose only GEMM
// word is their namespace, which no longer counts (IsMathKernel): the fused MoE layer
// (sm100_fp8_fp4_mega_moe_impl, sm100_bf16_mega_moe_impl: dispatch, two grouped GEMMs and combine
// in one kernel, its time mostly UMMA) and the indexer's FP8 logits GEMMs (sm90_fp8_mqa_logits,
// sm100_mqa_logits, the paged variants).
constexpr absl::string_view kDeepGemmMath[] = {"_mega_moe_impl", "_mqa_logits"};
// Reduced-precision types only imply tensor cores inside GEMM/conv kernels (an elementwise
// "cast_bf16" kernel does not use them).
// CUTLASS 3 GEMMs (`cutlass::device_kernel<…GemmUniversal…>`, grouped and FP8 GEMMs) name
// their element types (cutlass::bfloat16_t, half_t, float_e4m3_t) and their architecture (Sm90:
// wgmma) in template arguments.
constexpr absl::string_view kTensorCoreTypes[] = {"bf16", "f16", "fp16", "tf32", "bfloat16", "half",
                                                  "e4m3", "e5m2", "fp8", "int8", "sm90", "sm100"};
// FP32 GEMM/conv on CUDA cores (SIMT) when no tensor-core marker is present.
constexpr absl::string_view kSimtFp32[] = {"sgemm", "scudnn", "gemmsn", "gemv2t"};
// MIOpen's FP32 convolutions say their type in the name ("igemm_fwd_gtcx_nchw_fp32_…",
// "naive_conv_fwd_nchw_float_double_float", "miopenSp3AsmConv_v21_1_3_gfx9_fp32_stride1").
constexpr absl::string_view kFp32TypeWords[] = {"fp32", "_float"};
// Memory-bound kernels: each reads and writes its tensors once and does little math, so its
// time is memory bandwidth; a chain of them is what fusion removes. ATen's TensorIterator
// kernels ({vectorized_,unrolled_,}elementwise_kernel), norms (ATen, cuDNN bn_fw/bn_bw, apex),
// softmax, dropout, reductions, copies/cat/layout transforms, foreach optimizer steps
// (multi_tensor_apply), gathers/scatters, pooling, cuBLASLt's separate epilogue pass, CUB.
constexpr absl::string_view kMemoryBound[] = {
    "elementwise", "layer_norm", "layernorm", "rms_norm", "rmsnorm", "group_norm",
    "groupnorm", "batch_norm", "batchnorm", "bn_fw", "bn_bw", "instance_norm",
    "rowwisemoments", "gammabeta", "softmax", "dropout", "reduce", "copy",
    "fill", "nchwtonhwc", "nhwctonchw", "transpose", "permute", "multi_tensor_apply",
    "index", "scatter", "gather", "embedding", "pool", "epilogue", "cub::", "nll_loss",
    "cross_entropy"};

// The one table: first matching rule wins, so order encodes precedence (NCCL kernels that
// mention "reduce", Inductor's GEMM templates before its other Triton kernels, Triton kernels that
// name fused ops, attention kernels built from GEMMs, GEMM setup kernels before the type rules
// their template arguments would match, explicit SIMT markers inside "xmma" names).
constexpr Rule kRules[] = {
    {KernelClass::kCommunication, Match::kAny, kNccl},
    {KernelClass::kTensorCoreMath, Match::kInductorTemplateOf, kInductorGemmOps},
    {KernelClass::kTriton, Match::kPrefix, kTritonPrefix},
    {KernelClass::kFusedAttention, Match::kAny, kAttention},
    {KernelClass::kOther, Match::kFunctionIs, kGemmSetup},
    {KernelClass::kTensorCoreMath, Match::kFunctionIs, kNamedMoeGemms},
    {KernelClass::kTensorCoreMath, Match::kAny, kDeepGemmMath},
    {KernelClass::kSimtFp32Gemm, Match::kAnyInMathKernelWithoutTcType, kExplicitSimt},
    {KernelClass::kTensorCoreMath, Match::kTensileInputType, kTensileReducedInputs},
    {KernelClass::kSimtFp32Gemm, Match::kTensileInputType, kTensileFp32Inputs},
    {KernelClass::kTensorCoreMath, Match::kAny, kTensorCoreMarkers},
    {KernelClass::kTensorCoreMath, Match::kAnyInMathKernel, kTensorCoreTypes},
    {KernelClass::kSimtFp32Gemm, Match::kAny, kSimtFp32},
    {KernelClass::kSimtFp32Gemm, Match::kAnyInMathKernelWithoutTcType, kFp32TypeWords},
    {KernelClass::kMemoryBound, Match::kAny, kMemoryBound},
};

constexpr absl::string_view kMathKernels[] = {"gemm", "conv", "matmul", "cijk_"};
constexpr absl::string_view kSoftmax[] = {"softmax"};

bool ContainsAny(absl::string_view text, absl::Span<const absl::string_view> needles) {
  for (absl::string_view n : needles) {
    if (absl::StrContains(text, n)) return true;
  }
  return false;
}

// A GEMM/conv kernel by name; "conv" inside "convert" (dtype conversion kernels) is not one, nor
// is a math word that ends a namespace ("deep_gemm::", "grouped_gemm::", "cutlass::gemm::"):
// those libraries' layout and setup kernels live there too (DeepGEMM's FP8 scale-factor layout
// kernels deep_gemm::transpose_fp32 and pack_fp32_into_ue8m0 were FP32 GEMMs by their "fp32";
// vLLM's machete::prepack_B_kernel<…cutlass::gemm::…> a bf16 one).
bool IsMathKernel(absl::string_view lower) {
  for (absl::string_view n : kMathKernels) {
    for (size_t pos = lower.find(n); pos != absl::string_view::npos; pos = lower.find(n, pos + 1)) {
      const absl::string_view from = lower.substr(pos);
      if (absl::StartsWith(from.substr(n.size()), "::")) continue;
      if (n != "conv" || !absl::StartsWith(from, "convert")) return true;
    }
  }
  return false;
}

// The kernel's own function name: "void marlin::Marlin<…>(int4 const*, …)" -> "marlin",
// "fused_moe_kernel" -> itself, "void (anonymous namespace)::softmax_warp_forward<…>(…)" ->
// "softmax_warp_forward".
absl::string_view FunctionName(absl::string_view lower) {
  constexpr absl::string_view kAnonymous = "(anonymous namespace)::";
  if (absl::StartsWith(lower, "void ")) lower.remove_prefix(5);
  while (absl::StartsWith(lower, kAnonymous)) lower.remove_prefix(kAnonymous.size());
  size_t end = 0;
  while (end < lower.size() && lower[end] != '<' && lower[end] != '(') {
    if (lower.substr(end, kAnonymous.size()) == kAnonymous) {
      end += kAnonymous.size();
    } else {
      ++end;
    }
  }
  absl::string_view head = lower.substr(0, end);
  if (const size_t colon = head.rfind("::"); colon != absl::string_view::npos) {
    head.remove_prefix(colon + 2);
  }
  return head;
}

// The ops an Inductor template kernel computes: "triton_tem_fused__to_copy_addmm_gelu_0" ->
// {"", "to", "copy", "addmm", "gelu", "0"}; none for any other name.
bool InductorTemplateComputes(absl::string_view lower,
                              absl::Span<const absl::string_view> ops) {
  constexpr absl::string_view kTemplatePrefix = "triton_tem_fused_";
  if (!absl::StartsWith(lower, kTemplatePrefix)) return false;
  for (absl::string_view op : absl::StrSplit(lower.substr(kTemplatePrefix.size()), '_')) {
    for (absl::string_view m : ops) {
      if (op == m) return true;
    }
  }
  return false;
}

// The input data type of a Tensile GEMM ("bbs" of "cijk_ailk_bljk_bbs_bh_…"), or "" when the
// name is no Tensile kernel. hipBLASLt's hand-tuned kernels carry a prefix ("custom_cijk_…").
absl::string_view TensileTypes(absl::string_view lower) {
  const size_t at = lower.find("cijk_");
  if (at == absl::string_view::npos || (at > 0 && lower[at - 1] != '_')) return "";
  absl::string_view rest = lower.substr(at);
  for (int field = 0; field < 3; ++field) {  // past "cijk", "a…" and "b…"
    const size_t sep = rest.find('_');
    if (sep == absl::string_view::npos) return "";
    rest.remove_prefix(sep + 1);
  }
  return rest.substr(0, rest.find('_'));
}

bool Matches(const Rule& r, absl::string_view lower) {
  switch (r.match) {
    case Match::kPrefix:
      for (absl::string_view m : r.markers) {
        if (absl::StartsWith(lower, m)) return true;
      }
      return false;
    case Match::kTensileInputType: {
      const absl::string_view types = TensileTypes(lower);
      for (absl::string_view m : r.markers) {
        if (!types.empty() && absl::StartsWith(types, m)) return true;
      }
      return false;
    }
    case Match::kAny:
      return ContainsAny(lower, r.markers);
    case Match::kAnyInMathKernel:
      return IsMathKernel(lower) && ContainsAny(lower, r.markers);
    case Match::kAnyInMathKernelWithoutTcType:
      return IsMathKernel(lower) && ContainsAny(lower, r.markers) &&
             !ContainsAny(lower, kTensorCoreTypes);
    case Match::kFunctionIs: {
      const absl::string_view function = FunctionName(lower);
      for (absl::string_view m : r.markers) {
        if (function == m) return true;
      }
      return false;
    }
    case Match::kInductorTemplateOf:
      return InductorTemplateComputes(lower, r.markers);
  }
  return false;
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Template wrappers and namespaces that say nothing about what an ATen elementwise kernel does.
constexpr absl::string_view kNoiseTokens[] = {
    "at", "native", "anonymous", "namespace", "detail", "binary_internal", "gpu_kernel_impl",
    "AUnaryFunctor", "BUnaryFunctor", "BinaryFunctor", "UnaryFunctor", "TensorIteratorBase",
    "TensorIterator", "Array", "func_wrapper_t", "lambda", "operator", "const", "c10"};

bool IsNoise(absl::string_view token) {
  for (absl::string_view n : kNoiseTokens) {
    if (token == n) return true;
  }
  return std::isdigit(static_cast<unsigned char>(token[0])) != 0;
}

// The first identifier in an ATen elementwise kernel's template arguments that names the op:
// "CUDAFunctor_add", "MulFunctor", "launch_clamp_scalar", "sigmoid_kernel_cuda",
// "GeluCUDAKernelImpl".
std::string ElementwiseOp(absl::string_view args) {
  for (size_t i = 0; i < args.size();) {
    if (!IsIdentChar(args[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < args.size() && IsIdentChar(args[j])) ++j;
    const absl::string_view token = args.substr(i, j - i);
    if (!IsNoise(token) &&
        (absl::StrContains(token, "Functor") || absl::StrContains(token, "kernel") ||
         absl::StrContains(token, "Kernel") || absl::StrContains(token, "launch_"))) {
      return std::string(token);
    }
    i = j;
  }
  return "";
}

KernelClass ClassifyByRules(absl::string_view lower) {
  for (const Rule& r : kRules) {
    if (Matches(r, lower)) return r.cls;
  }
  return KernelClass::kOther;
}

// Not "fused" alone: PyTorch's eager dropout is fused_dropout_kernel, one link of a chain.
constexpr absl::string_view kFused[] = {"multi_tensor_apply", "fused_adam", "fusedadam",
                                        "fused_sgd", "fusedsgd", "fused_lamb", "fusedlamb"};

// What the name says of a kernel, read once per name (the softmax and fused-optimizer tests ask
// at every memory-bound launch of every step: lower-casing a copy each time was ~2% of an
// offline analysis).
struct KernelFacts {
  KernelClass cls = KernelClass::kOther;
  bool softmax = false;
  bool already_fused = false;
};

KernelFacts FactsByRules(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(absl::string_view(name.data(), name.size()));
  KernelFacts f;
  f.cls = ClassifyByRules(lower);
  f.softmax = f.cls == KernelClass::kMemoryBound && ContainsAny(lower, kSoftmax);
  f.already_fused = f.cls == KernelClass::kMemoryBound && ContainsAny(lower, kFused);
  return f;
}

// Names seen before, process-wide: a job's few hundred distinct kernels are classified once, not
// at every launch of every step by every detector that asks (lower-casing and ~20 substring
// searches per ask were a quarter of gpuspyd's CPU while it analysed under ingest). Bounded: past
// kMaxRemembered names, new ones are classified each time.
constexpr size_t kMaxRemembered = 1 << 16;

// std::shared_mutex, not absl::Mutex: Debian's abseil is built without ThreadSanitizer's
// annotations, so TSan cannot see an absl::Mutex's ordering and reports the map as raced.
struct Remembered {
  std::shared_mutex mu;
  absl::flat_hash_map<std::string, KernelFacts> by_name;  // guarded by mu
};

Remembered& Memory() {
  static Remembered* remembered = new Remembered();  // never destroyed: analysis threads may run at exit
  return *remembered;
}

KernelFacts FactsOf(std::string_view name) {
  const absl::string_view key(name.data(), name.size());
  Remembered& m = Memory();
  {
    std::shared_lock lock(m.mu);
    if (auto it = m.by_name.find(key); it != m.by_name.end()) return it->second;
  }
  const KernelFacts f = FactsByRules(name);
  std::unique_lock lock(m.mu);
  if (m.by_name.size() < kMaxRemembered) m.by_name.emplace(key, f);
  return f;
}

}  // namespace

KernelClass ClassifyKernel(std::string_view name) { return FactsOf(name).cls; }

bool UsesTensorCores(std::string_view name) {
  return ClassifyKernel(name) == KernelClass::kTensorCoreMath;
}

bool IsGemmClass(KernelClass c) {
  return c == KernelClass::kTensorCoreMath || c == KernelClass::kSimtFp32Gemm;
}

bool IsSoftmaxKernel(std::string_view name) { return FactsOf(name).softmax; }

bool IsAlreadyFusedKernel(std::string_view name) { return FactsOf(name).already_fused; }

std::string_view KernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::kTensorCoreMath: return "gemm_tc";
    case KernelClass::kSimtFp32Gemm: return "gemm_fp32";
    case KernelClass::kCommunication: return "comm";
    case KernelClass::kFusedAttention: return "attention";
    case KernelClass::kMemoryBound: return "elementwise";
    case KernelClass::kTriton: return "triton";
    case KernelClass::kOther: return "other";
  }
  return "other";
}

std::string ShortKernelName(std::string_view name) {
  std::string s = absl::StrReplaceAll(absl::string_view(name.data(), name.size()),
                                      {{"(anonymous namespace)::", ""}});
  absl::string_view v = s;
  if (absl::StartsWith(v, "void ")) v.remove_prefix(5);
  const size_t cut = v.find_first_of("<(");
  absl::string_view head = v.substr(0, cut);
  const absl::string_view args = cut == absl::string_view::npos ? "" : v.substr(cut + 1);
  if (const size_t colon = head.rfind("::"); colon != absl::string_view::npos) {
    head.remove_prefix(colon + 2);
  }
  std::string out(head);
  // cutlass::Kernel<cutlass_80_tensorop_s1688gemm_...>: the template argument is the name.
  if ((head == "Kernel" || head == "device_kernel") && !args.empty()) {
    size_t end = 0;
    while (end < args.size() && (IsIdentChar(args[end]) || args[end] == ':')) ++end;
    absl::string_view inner = args.substr(0, end);
    if (const size_t colon = inner.rfind("::"); colon != absl::string_view::npos) {
      inner.remove_prefix(colon + 2);
    }
    if (!inner.empty()) out = std::string(inner);
  } else if (absl::StrContains(head, "elementwise_kernel")) {
    const std::string op = ElementwiseOp(args);
    if (!op.empty()) out += "<" + op + ">";
  }
  constexpr size_t kMaxShortName = 64;
  return ClipName(out, kMaxShortName);
}

}  // namespace gpuspy::analysis
