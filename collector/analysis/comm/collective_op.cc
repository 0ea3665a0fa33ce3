#include "collector/analysis/comm/collective_op.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
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
