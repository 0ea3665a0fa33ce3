// What a collective does, read from what the producer knows: Kineto's "Collective name" arg, or
// the NCCL kernel's own name ("ncclDevKernel_AllReduce_Sum_f32_RING_LL",
// "ncclKernel_AllReduce_RING_LL_Sum_float(...)") when live CUPTI capture has nothing else.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuspy::analysis {

enum class CollectiveOp : uint8_t {
  kUnknown,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,  // point-to-point (pipeline stages, and NCCL's all_to_all underneath)
};

std::string_view CollectiveOpName(CollectiveOp op);  // "allreduce", "allgather", ...

// PyTorch's collective names: "allreduce", "all_reduce", "_allgather_base", "all_gather_into_tensor",
// "reduce_scatter_tensor_coalesced", "all_to_all", "alltoall_base", "send", "recv", ...
CollectiveOp ParseCollectiveName(std::string_view name);

// The op an NCCL kernel name encodes; kUnknown for other kernels.
CollectiveOp CollectiveOpOfKernel(std::string_view kernel_name);

// What else an NCCL kernel's name says: the element type, the algorithm (RING, TREE, NVLS,
// COLLNET_DIRECT, ...) and the protocol (LL, LL128, SIMPLE: NCCL picks LL for small messages,
// SIMPLE for large ones). Empty where the name does not say (send/recv kernels, older names
// without a type). "ncclDevKernel_AllReduce_Sum_bf16_RING_LL" -> {"bf16", "RING", "LL"};
// "ncclKernel_AllReduce_RING_LL_Sum_float" -> {"float", "RING", "LL"}.
struct NcclKernelTraits {
  std::string dtype;
  std::string algorithm;
  std::string protocol;
};
NcclKernelTraits NcclTraitsOfKernel(std::string_view kernel_name);

// "bf16 RING/LL", "RING/SIMPLE", "" (for evidence).
std::string DescribeNcclTraits(const NcclKernelTraits& t);

// nccl-tests' busBw = algBw x this factor (PERFORMANCE.md): what a link's peak compares with.
// `ranks` is the group size; 1 for ops that move data once (broadcast, reduce, send/recv).
double BusBandwidthFactor(CollectiveOp op, uint32_t ranks);

}  // namespace gpuspy::analysis
