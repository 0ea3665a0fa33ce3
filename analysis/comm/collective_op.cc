#include "analysis/comm/collective_op.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_replace.h"

namespace gpuspy::analysis {
namespace {

// Lower case without '_' so that "all_reduce", "AllReduce" and "allreduce" read alike.
std::string Normalise(std::string_view text) {
  std::string s = absl::AsciiStrToLower(absl::string_view(text.data(), text.size()));
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  return s;
}

// Longest names first: "reducescatter" contains "reduce", "allgather" must not read as "all...".
CollectiveOp FromNormalised(absl::string_view s) {
  if (absl::StrContains(s, "allreduce")) return CollectiveOp::kAllReduce;
  if (absl::StrContains(s, "reducescatter")) return CollectiveOp::kReduceScatter;
  if (absl::StrContains(s, "allgather")) return CollectiveOp::kAllGather;
  if (absl::StrContains(s, "alltoall")) return CollectiveOp::kAllToAll;
  if (absl::StrContains(s, "broadcast")) return CollectiveOp::kBroadcast;
  if (absl::StrContains(s, "sendrecv") || absl::StrContains(s, "send") ||
      absl::StrContains(s, "recv")) {
    return CollectiveOp::kSendRecv;
  }
  if (absl::StrContains(s, "reduce")) return CollectiveOp::kReduce;
  return CollectiveOp::kUnknown;
}

}  // namespace

std::string_view CollectiveOpName(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "allreduce";
    case CollectiveOp::kAllGather: return "allgather";
    case CollectiveOp::kReduceScatter: return "reducescatter";
    case CollectiveOp::kBroadcast: return "broadcast";
    case CollectiveOp::kReduce: return "reduce";
    case CollectiveOp::kAllToAll: return "alltoall";
    case CollectiveOp::kSendRecv: return "sendrecv";
    case CollectiveOp::kUnknown: break;
  }
  return "collective";
}

CollectiveOp ParseCollectiveName(std::string_view name) { return FromNormalised(Normalise(name)); }

CollectiveOp CollectiveOpOfKernel(std::string_view kernel_name) {
  const std::string s = Normalise(kernel_name);
  if (!absl::StartsWith(s, "nccl")) return CollectiveOp::kUnknown;
  // Only the part before the argument list: "(ncclDevComm*, ...)" says nothing about the op.
  return FromNormalised(absl::string_view(s).substr(0, s.find('(')));
}

NcclKernelTraits NcclTraitsOfKernel(std::string_view kernel_name) {
  NcclKernelTraits t;
  if (kernel_name.substr(0, 4) != "nccl") return t;
  const std::string_view head = kernel_name.substr(0, kernel_name.find('('));
  // Two-part names first: "NVLS_TREE" is not "TREE".
  static constexpr std::string_view kAlgorithms[] = {"NVLS_TREE", "COLLNET_DIRECT", "COLLNET_CHAIN",
                                                     "NVLS", "RING", "TREE", "PAT"};
  static constexpr std::string_view kProtocols[] = {"LL128", "LL", "SIMPLE"};
  static constexpr std::string_view kTypes[] = {
      "i8", "u8", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2",
      "int8_t", "uint8_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "half", "float",
      "double", "__nv_bfloat16"};
  for (absl::string_view piece : absl::StrSplit(absl::string_view(head.data(), head.size()), '_')) {
    const std::string_view part(piece.data(), piece.size());
    for (std::string_view p : kProtocols) {
      if (part == p && t.protocol.empty()) t.protocol = std::string(p);
    }
    for (std::string_view d : kTypes) {
      if (part == d && t.dtype.empty()) t.dtype = std::string(d);
    }
  }
  for (std::string_view a : kAlgorithms) {
    const size_t at = head.find(a);
    if (at == std::string_view::npos) continue;
    // A whole part of the name: "_RING_", not inside another word.
    const bool starts = at > 0 && head[at - 1] == '_';
    const size_t end = at + a.size();
    const bool ends = end == head.size() || head[end] == '_';
    if (starts && ends) {
      t.algorithm = std::string(a);
      break;
    }
  }
  return t;
}

std::string DescribeNcclTraits(const NcclKernelTraits& t) {
  std::string out = t.dtype;
  if (!t.algorithm.empty() || !t.protocol.empty()) {
    if (!out.empty()) out += " ";
    out += t.algorithm.empty() ? t.protocol
                               : t.protocol.empty() ? t.algorithm : t.algorithm + "/" + t.protocol;
  }
  return out;
}

double BusBandwidthFactor(CollectiveOp op, uint32_t ranks) {
  if (ranks < 2) return 1.0;
  const double n = ranks;
  switch (op) {
    case CollectiveOp::kAllReduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll: return (n - 1) / n;
    default: return 1.0;
  }
}

}  // namespace gpuspy::analysis
