// What a collective is, from Kineto's "Collective name" or from the NCCL kernel's own name.
#include "analysis/comm/collective_op.h"

#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

TEST(CollectiveOp, PyTorchCollectiveNames) {
  EXPECT_EQ(ParseCollectiveName("allreduce"), CollectiveOp::kAllReduce);
  EXPECT_EQ(ParseCollectiveName("all_reduce_coalesced"), CollectiveOp::kAllReduce);
  EXPECT_EQ(ParseCollectiveName("_allgather_base"), CollectiveOp::kAllGather);
  EXPECT_EQ(ParseCollectiveName("all_gather_into_tensor"), CollectiveOp::kAllGather);
  EXPECT_EQ(ParseCollectiveName("reduce_scatter_tensor_coalesced"), CollectiveOp::kReduceScatter);
  EXPECT_EQ(ParseCollectiveName("_reduce_scatter_base"), CollectiveOp::kReduceScatter);
  EXPECT_EQ(ParseCollectiveName("all_to_all"), CollectiveOp::kAllToAll);
  EXPECT_EQ(ParseCollectiveName("alltoall_base"), CollectiveOp::kAllToAll);
  EXPECT_EQ(ParseCollectiveName("broadcast"), CollectiveOp::kBroadcast);
  EXPECT_EQ(ParseCollectiveName("reduce"), CollectiveOp::kReduce);
  EXPECT_EQ(ParseCollectiveName("send"), CollectiveOp::kSendRecv);
  EXPECT_EQ(ParseCollectiveName("recv"), CollectiveOp::kSendRecv);
  EXPECT_EQ(ParseCollectiveName("barrier"), CollectiveOp::kUnknown);
}

TEST(CollectiveOp, NcclKernelNamesOldAndNew) {
  // NCCL >= 2.19 (ncclDevKernel_<Op>_<RedOp>_<type>_<algo>_<proto>) and older ones (the real
  // traces in ../shared/traces), with their argument lists.
  EXPECT_EQ(CollectiveOpOfKernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"),
            CollectiveOp::kAllReduce);
  EXPECT_EQ(CollectiveOpOfKernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
            CollectiveOp::kAllReduce);
  EXPECT_EQ(CollectiveOpOfKernel("ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"),
            CollectiveOp::kBroadcast);
  EXPECT_EQ(CollectiveOpOfKernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"),
            CollectiveOp::kSendRecv);
  EXPECT_EQ(CollectiveOpOfKernel("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"), CollectiveOp::kReduceScatter);
  EXPECT_EQ(CollectiveOpOfKernel("ncclDevKernel_AllGather_RING_LL"), CollectiveOp::kAllGather);
  EXPECT_EQ(CollectiveOpOfKernel("ncclDevKernel_Generic"), CollectiveOp::kUnknown);
  EXPECT_EQ(CollectiveOpOfKernel("void at::native::reduce_kernel<512, 1>"), CollectiveOp::kUnknown);
}

TEST(CollectiveOp, BusBandwidthFactorsOfNcclTests) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kAllGather, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kReduceScatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kAllToAll, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveOp::kAllReduce, 1), 1.0);
}

}  // namespace
}  // namespace gpuspy::analysis

namespace gpuspy::analysis {
namespace {

TEST(CollectiveOp, NcclKernelNamesSayTypeAlgorithmAndProtocol) {
  const NcclKernelTraits a = NcclTraitsOfKernel(
      "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(a.dtype, "bf16");
  EXPECT_EQ(a.algorithm, "RING");
  EXPECT_EQ(a.protocol, "LL");
  EXPECT_EQ(DescribeNcclTraits(a), "bf16 RING/LL");
  // NCCL < 2.19's names: algorithm and protocol before the op's reduction and type.
  const NcclKernelTraits old = NcclTraitsOfKernel(
      "ncclKernel_AllReduce_RING_LL128_Sum_float(ncclDevComm*, unsigned long, ncclWork*)");
  EXPECT_EQ(old.dtype, "float");
  EXPECT_EQ(old.algorithm, "RING");
  EXPECT_EQ(old.protocol, "LL128");
  // A two-part algorithm is not its second part.
  EXPECT_EQ(NcclTraitsOfKernel("ncclDevKernel_AllReduce_Sum_f16_NVLS_TREE_SIMPLE").algorithm,
            "NVLS_TREE");
  EXPECT_EQ(NcclTraitsOfKernel("ncclDevKernel_AllGather_RING_LL").dtype, "");
  // Send/recv names nothing of the sort; other kernels are not NCCL's.
  EXPECT_EQ(DescribeNcclTraits(NcclTraitsOfKernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)")), "");
  EXPECT_EQ(DescribeNcclTraits(NcclTraitsOfKernel("ampere_sgemm_128x64_tn")), "");
}

}  // namespace
}  // namespace gpuspy::analysis
