#include "importers/kineto/op_work.h"

#include <array>
#include <limits>

#include "importers/kineto/kineto_mapping.h"
#include "model/dtypes.h"

namespace gpuspy::importers {
namespace {

// Products past this are no real tensor's (2^62): the figures are refused, not wrapped.
constexpr uint64_t kMaxCount = uint64_t{1} << 62;

// How an op's figures follow from its inputs.
enum class Formula {
  kNone,
  kMatmul,        // [M,K] x [K,N] (batched: [B,M,K] x [B,K,N]); `first` is the left operand
  kAttention,     // q [B,H,L,E], k [B,H,S,E], v [B,H,S,Ev]: QK^T and PV
  kFromFlopsArg,  // convolutions: only the profiler's `flops` arg gives the FLOPs
  kElementwise,   // reads every tensor input once, writes one output the size of the largest
  kInPlace,       // reads every tensor input once, writes the first back
  kCopy,          // copy_(dst, src): reads src, writes dst; fill_/zero_: writes dst
  kReduction,     // reads every tensor input once; the output is small
};

struct OpRule {
  std::string_view op;
  Formula formula;
  size_t first = 0;  // kMatmul: the input index of the left operand (addmm's bias is input 0)
};

// The ops PyTorch's own FLOP counter (torch/csrc/profiler/util.cpp, computeFlops) and
// torch.utils.flop_counter count, plus the memory-bound ops a step's elementwise time is made
// of. Leaves where a parent and a child would both count (aten::softmax -> aten::_softmax); where
// both are listed (the attention ops) the analysis keeps the outermost of nested ops.
constexpr std::array<OpRule, 62> kRules = {{
    {"aten::mm", Formula::kMatmul, 0},
    {"aten::addmm", Formula::kMatmul, 1},
    {"aten::bmm", Formula::kMatmul, 0},
    {"aten::baddbmm", Formula::kMatmul, 1},
    {"aten::_scaled_mm", Formula::kMatmul, 0},
    {"aten::_int_mm", Formula::kMatmul, 0},
    {"aten::scaled_dot_product_attention", Formula::kAttention},
    {"aten::_scaled_dot_product_flash_attention", Formula::kAttention},
    {"aten::_scaled_dot_product_efficient_attention", Formula::kAttention},
    {"aten::_scaled_dot_product_cudnn_attention", Formula::kAttention},
    {"aten::conv1d", Formula::kFromFlopsArg},
    {"aten::conv2d", Formula::kFromFlopsArg},
    {"aten::conv3d", Formula::kFromFlopsArg},
    {"aten::convolution", Formula::kFromFlopsArg},
    {"aten::_convolution", Formula::kFromFlopsArg},
    {"aten::cudnn_convolution", Formula::kFromFlopsArg},
    {"aten::add", Formula::kElementwise},
    {"aten::sub", Formula::kElementwise},
    {"aten::mul", Formula::kElementwise},
    {"aten::div", Formula::kElementwise},
    {"aten::neg", Formula::kElementwise},
    {"aten::exp", Formula::kElementwise},
    {"aten::log", Formula::kElementwise},
    {"aten::pow", Formula::kElementwise},
    {"aten::sqrt", Formula::kElementwise},
    {"aten::rsqrt", Formula::kElementwise},
    {"aten::relu", Formula::kElementwise},
    {"aten::gelu", Formula::kElementwise},
    {"aten::silu", Formula::kElementwise},
    {"aten::sigmoid", Formula::kElementwise},
    {"aten::tanh", Formula::kElementwise},
    {"aten::where", Formula::kElementwise},
    {"aten::clamp", Formula::kElementwise},
    {"aten::threshold_backward", Formula::kElementwise},
    {"aten::gelu_backward", Formula::kElementwise},
    {"aten::silu_backward", Formula::kElementwise},
    {"aten::sigmoid_backward", Formula::kElementwise},
    {"aten::tanh_backward", Formula::kElementwise},
    {"aten::native_dropout", Formula::kElementwise},
    {"aten::_softmax", Formula::kElementwise},
    {"aten::_log_softmax", Formula::kElementwise},
    {"aten::_softmax_backward_data", Formula::kElementwise},
    {"aten::native_layer_norm", Formula::kElementwise},
    {"aten::native_batch_norm", Formula::kElementwise},
    {"aten::cudnn_batch_norm", Formula::kElementwise},
    {"aten::add_", Formula::kInPlace},
    {"aten::sub_", Formula::kInPlace},
    {"aten::mul_", Formula::kInPlace},
    {"aten::div_", Formula::kInPlace},
    {"aten::relu_", Formula::kInPlace},
    {"aten::addcmul_", Formula::kInPlace},
    {"aten::addcdiv_", Formula::kInPlace},
    {"aten::lerp_", Formula::kInPlace},
    {"aten::clamp_", Formula::kInPlace},
    {"aten::sqrt_", Formula::kInPlace},
    {"aten::copy_", Formula::kCopy},
    {"aten::fill_", Formula::kCopy},
    {"aten::zero_", Formula::kCopy},
    {"aten::sum", Formula::kReduction},
    {"aten::mean", Formula::kReduction},
    {"aten::norm", Formula::kReduction},
    {"aten::linalg_vector_norm", Formula::kReduction},
}};

const OpRule* RuleOf(std::string_view op) {
  for (const OpRule& r : kRules) {
    if (r.op == op) return &r;
  }
  return nullptr;
}

// Product of `values`, nullopt on a negative value or past kMaxCount.
std::optional<uint64_t> Product(std::initializer_list<uint64_t> values) {
  uint64_t p = 1;
  for (uint64_t v : values) {
    if (v != 0 && p > kMaxCount / v) return std::nullopt;
    p *= v;
  }
  return p;
}

// Elements of a tensor of `dims`; nullopt for a negative dim or an absurd size.
std::optional<uint64_t> Elements(std::span<const int64_t> dims) {
  uint64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    const auto u = static_cast<uint64_t>(d);
    if (u != 0 && n > kMaxCount / u) return std::nullopt;
    n *= u;
  }
  return n;
}

// Whether input i is a tensor: it has dims, or a tensor type with no dims (a 0-d tensor).
bool IsTensor(const OpInputs& in, size_t i) {
  return !in.Dims(i).empty() || DtypeSize(in.Type(i)) > 0;
}

// Bytes of input i: its elements x its type's size (0 when unknown).
std::optional<uint64_t> BytesOf(const OpInputs& in, size_t i) {
  const std::optional<uint64_t> n = Elements(in.Dims(i));
  if (!n) return std::nullopt;
  return Product({*n, DtypeSize(in.Type(i))});
}

std::string_view FirstFloatType(const OpInputs& in) {
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string_view short_name = DtypeShortName(in.Type(i));
    if (short_name.starts_with("fp") || short_name == "int8") return in.Type(i);
  }
  return in.size() > 0 ? in.Type(0) : std::string_view();
}

std::optional<OpWorkFigures> Matmul(const OpInputs& in, size_t first) {
  if (in.size() < first + 2) return std::nullopt;
  const auto a = in.Dims(first), b = in.Dims(first + 1);
  if (a.size() != b.size() || (a.size() != 2 && a.size() != 3)) return std::nullopt;
  const size_t r = a.size() - 2;  // batch dims before M,K
  if (a[r + 1] != b[r] || (r == 1 && a[0] != b[0])) return std::nullopt;  // not a matmul's shapes
  for (int64_t d : a) if (d < 0) return std::nullopt;
  for (int64_t d : b) if (d < 0) return std::nullopt;
  const uint64_t batch = r == 1 ? static_cast<uint64_t>(a[0]) : 1;
  const auto m = static_cast<uint64_t>(a[r]), k = static_cast<uint64_t>(a[r + 1]),
             n = static_cast<uint64_t>(b[r + 1]);
  const std::optional<uint64_t> flops = Product({2, batch, m, n, k});
  const uint32_t size = DtypeSize(in.Type(first));
  const std::optional<uint64_t> out = Product({batch, m, n, size});
  const std::optional<uint64_t> lhs = BytesOf(in, first), rhs = BytesOf(in, first + 1);
  if (!flops || !out || !lhs || !rhs) return std::nullopt;
  uint64_t bytes = *lhs + *rhs + *out;
  if (first == 1) {  // addmm / baddbmm: the bias (input 0) is read too
    if (const std::optional<uint64_t> bias = BytesOf(in, 0)) bytes += *bias;
  }
  return OpWorkFigures{*flops, size == 0 ? 0 : bytes, in.Type(first), WorkSource::kInputShapes};
}

std::optional<OpWorkFigures> Attention(const OpInputs& in) {
  if (in.size() < 3) return std::nullopt;
  const auto q = in.Dims(0), k = in.Dims(1), v = in.Dims(2);
  if (q.size() != 4 || k.size() != 4 || v.size() != 4) return std::nullopt;
  for (auto dims : {q, k, v}) {
    for (int64_t d : dims) if (d < 0) return std::nullopt;
  }
  const auto batch = static_cast<uint64_t>(q[0]), heads = static_cast<uint64_t>(q[1]),
             l = static_cast<uint64_t>(q[2]), e = static_cast<uint64_t>(q[3]),
             s = static_cast<uint64_t>(k[2]), ev = static_cast<uint64_t>(v[3]);
  // Q K^T (2 B H L S E) and P V (2 B H L S Ev); a causal mask's skipped half is not known here.
  const std::optional<uint64_t> qk = Product({2, batch, heads, l, s, e});
  const std::optional<uint64_t> pv = Product({2, batch, heads, l, s, ev});
  const uint32_t size = DtypeSize(in.Type(0));
  const std::optional<uint64_t> out = Product({batch, heads, l, ev, size});
  const std::optional<uint64_t> bq = BytesOf(in, 0), bk = BytesOf(in, 1), bv = BytesOf(in, 2);
  if (!qk || !pv || !out || !bq || !bk || !bv || *qk > kMaxCount - *pv) return std::nullopt;
  return OpWorkFigures{*qk + *pv, size == 0 ? 0 : *bq + *bk + *bv + *out, in.Type(0),
                       WorkSource::kInputShapes};
}

// Memory-bound ops: bytes only (their FLOPs are a few per element, not what bounds them).
std::optional<OpWorkFigures> MemoryBound(const OpInputs& in, Formula formula) {
  uint64_t read = 0, largest = 0, first = 0;
  bool any = false;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!IsTensor(in, i)) continue;
    const std::optional<uint64_t> b = BytesOf(in, i);
    if (!b) return std::nullopt;
    if (!any) first = *b;
    any = true;
    if (read > kMaxCount - *b) return std::nullopt;
    read += *b;
    largest = std::max(largest, *b);
  }
  if (!any || read == 0) return std::nullopt;
  uint64_t bytes = read;
  switch (formula) {
    case Formula::kElementwise: bytes = read + largest; break;
    case Formula::kInPlace: bytes = read + first; break;
    case Formula::kCopy: bytes = in.size() >= 2 && IsTensor(in, 1) ? read : first; break;
    default: break;
  }
  return OpWorkFigures{0, bytes, FirstFloatType(in), WorkSource::kInputShapes};
}

}  // namespace

bool IsWorkOp(std::string_view op) { return RuleOf(op) != nullptr; }

std::optional<OpWorkFigures> OpWorkOf(std::string_view op, std::string_view flops_arg,
                                      const OpInputs& inputs) {
  const OpRule* rule = RuleOf(op);
  int64_t profiler_flops = 0;
  const bool has_flops = !flops_arg.empty() && ToInt(flops_arg, &profiler_flops) && profiler_flops > 0;
  std::optional<OpWorkFigures> figures;
  if (rule != nullptr) {
    switch (rule->formula) {
      case Formula::kMatmul: figures = Matmul(inputs, rule->first); break;
      case Formula::kAttention: figures = Attention(inputs); break;
      case Formula::kFromFlopsArg: break;
      case Formula::kElementwise:
      case Formula::kInPlace:
      case Formula::kCopy:
      case Formula::kReduction: figures = MemoryBound(inputs, rule->formula); break;
      case Formula::kNone: break;
    }
  }
  if (has_flops) {
    // The profiler's count wins for the FLOPs; the shapes still give the bytes and the type.
    OpWorkFigures f = figures.value_or(OpWorkFigures{});
    if (!figures) {
      // A convolution's input and weight, read once: the output's size needs the strides.
      uint64_t bytes = 0;
      for (size_t i = 0; i < inputs.size() && i < 2; ++i) {
        if (const std::optional<uint64_t> b = BytesOf(inputs, i)) bytes += *b;
      }
      f.bytes = bytes;
      f.dtype = FirstFloatType(inputs);
    }
    f.flops = static_cast<uint64_t>(profiler_flops);
    f.source = WorkSource::kProfilerFlops;
    return f;
  }
  if (figures && figures->flops == 0 && figures->bytes == 0) return std::nullopt;
  return figures;
}

}  // namespace gpuspy::importers
