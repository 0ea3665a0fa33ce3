// Per-step breakdown figures on hand-built steps whose every number is known.
#include "analysis/step_report.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

constexpr int64_t us = 1'000;  // ns per microsecond

const StreamKey kStream7{0, 1, 7};
const StreamKey kStream13{0, 1, 13};
constexpr uint32_t kThread = 4242;

class StepReportTest : public ::testing::Test {
 protected:
  void Kernel(const std::string& name, int64_t start_us, int64_t end_us,
              StreamKey stream = kStream7) {
    ev_.kernels.push_back({start_us * us, end_us * us, ++corr_, strings_.Intern(name), stream,
                           {}, 0});
  }
  void Api(const std::string& name, int64_t start_us, int64_t end_us) {
    ev_.apis.push_back({start_us * us, end_us * us, ++corr_, ApiDomain::kRuntime, 1,
                        strings_.Intern(name), kThread, 0});
  }
  void Memory(MemoryOpKind op, int64_t at_us, uint64_t bytes) {
    ev_.memory.push_back({at_us * us, ++corr_, kStream7, op, MemoryKind::kDevice, true,
                          0x7f00'0000'0000ULL, bytes});
  }
  v1::StepReport Build(int64_t start_us = 0, int64_t end_us = 1'000) {
    return BuildStepReport(ev_, strings_, StepWindow{3, start_us * us, end_us * us, "nvtx:test"},
                           /*process_id=*/77);
  }

  StringTable strings_;
  EventColumns ev_;
  uint64_t corr_ = 100;
};

// The main hand-built step, window [0, 1000us):
//   kernels  ampere_sgemm [100,290) s7, sm90_xmma bf16 [200,400) s13, ten elementwise kernels
//            of 1..10us back to back in [300,355) s7          -> kernel union [100,400) = 300us
//   memcpy   H2D pinned async [50,150) s7                      -> not overlapped [50,100) = 50us
//   GPU busy [50,400) = 350us, idle [0,50) + [400,1000) = 650us
//   host     cudaStreamSynchronize [500,900), then the drain until GPU work resumes (none:
//            [900,1000))                                       -> idle_sync_blocked 500us
//            cudaLaunchKernel [410,430), [440,460) (GPU idle)  -> idle_launch_bound 40us
//            cudaLaunchKernel [90,95) (GPU busy: no idle)
//            idle_input [0,50): before the step's first CUDA activity = 50us
//            idle_host_other = 650 - 500 - 40 - 50 = 60us
//   memory   alloc 1MiB@20, alloc 2MiB@600, free 512KiB@950; alloc@1000 and @-5 are outside
//   outside  kernel [1200,1500), memcpy [-300,-100), cudaDeviceSynchronize [1100,1200)
class HandBuiltStep : public StepReportTest {
 protected:
  void SetUp() override {
    Kernel("ampere_sgemm_128x64_tn", 100, 290, kStream7);
    Kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 200, 400, kStream13);
    int64_t t = 300;
    for (int d = 1; d <= 10; ++d) {
      Kernel("void at::native::vectorized_elementwise_kernel<4>", t, t + d, kStream7);
      t += d;
    }
    ev_.memcpys.push_back({50 * us, 150 * us, ++corr_, kStream7, CopyKind::kHtoD,
                           MemoryKind::kPinned, MemoryKind::kDevice, true, 4u << 20, 0, 0});
    Api("cudaStreamSynchronize", 500, 900);
    ev_.syncs.push_back({500 * us, 900 * us, corr_, kStream7, SyncKind::kStream});
    Api("cudaLaunchKernel", 90, 95);
    Api("cudaLaunchKernel", 410, 430);
    Api("cudaLaunchKernel", 440, 460);
    Memory(MemoryOpKind::kAlloc, 20, 1u << 20);
    Memory(MemoryOpKind::kAlloc, 600, 2u << 20);
    Memory(MemoryOpKind::kFree, 950, 512u << 10);
    // Outside the window.
    Memory(MemoryOpKind::kAlloc, 1'000, 64u << 20);
    Memory(MemoryOpKind::kFree, -5, 64u << 20);
    Kernel("ampere_sgemm_128x64_tn", 1'200, 1'500, kStream7);
    Kernel("outside_only_kernel", 1'200, 1'500, kStream13);
    ev_.memcpys.push_back({-300 * us, -100 * us, ++corr_, kStream7, CopyKind::kDtoH,
                           MemoryKind::kDevice, MemoryKind::kPageable, false, 1u << 30, 0, 0});
    Api("cudaDeviceSynchronize", 1'100, 1'200);
  }
};

TEST_F(HandBuiltStep, StepIdentityIsCopied) {
  const v1::StepReport r = Build();
  EXPECT_EQ(r.step().process_id(), 77u);
  EXPECT_EQ(r.step().number(), 3);
  EXPECT_EQ(r.step().start_ns(), 0);
  EXPECT_EQ(r.step().end_ns(), 1'000 * us);
  EXPECT_EQ(r.step().source(), "nvtx:test");
}

TEST_F(HandBuiltStep, KernelTimeIsTheUnionAcrossStreams) {
  const v1::StepReport report = Build();
  const auto& b = report.breakdown();
  EXPECT_EQ(b.wall_ns(), 1'000 * us);
  EXPECT_EQ(b.kernel_ns(), 300 * us);
  EXPECT_EQ(b.kernel_count(), 12u);
}

TEST_F(HandBuiltStep, CopyFiguresCountOnlyTheWindowAndTheUncoveredPart) {
  const v1::StepReport report = Build();
  const auto& b = report.breakdown();
  EXPECT_EQ(b.memcpy_ns(), 100 * us);
  EXPECT_EQ(b.memcpy_htod_ns(), 100 * us);
  EXPECT_EQ(b.memcpy_dtoh_ns(), 0);  // the DtoH copy lies before the window
  EXPECT_EQ(b.memcpy_dtod_ns(), 0);
  EXPECT_EQ(b.memcpy_ptop_ns(), 0);
  EXPECT_EQ(b.memcpy_not_overlapped_ns(), 50 * us);
  EXPECT_EQ(b.memcpy_count(), 1u);
  EXPECT_EQ(b.memcpy_bytes(), 4u << 20);
  EXPECT_EQ(b.memset_ns(), 0);
}

TEST_F(HandBuiltStep, BusyAndIdleSplitTheWall) {
  const v1::StepReport report = Build();
  const auto& b = report.breakdown();
  EXPECT_EQ(b.gpu_busy_ns(), 350 * us);
  EXPECT_EQ(b.gpu_idle_ns(), 650 * us);
  EXPECT_EQ(b.gpu_idle_ns(), b.wall_ns() - b.gpu_busy_ns());
  EXPECT_EQ(b.compute_busy_ns(), 350 * us);
  EXPECT_EQ(b.communication_ns(), 0);
}

TEST_F(HandBuiltStep, IdleIsAttributedToSyncLaunchAndOther) {
  const v1::StepReport report = Build();
  const auto& b = report.breakdown();
  EXPECT_EQ(b.host_sync_blocked_ns(), 400 * us);
  // The sync [500,900) waits with nothing running on the GPU: no drain after it (the host was
  // not ahead), so [900,1000) is host work like [460,500).
  EXPECT_EQ(b.idle_sync_blocked_ns(), 400 * us);
  EXPECT_EQ(b.launch_api_ns(), 45 * us);
  EXPECT_EQ(b.idle_launch_bound_ns(), 40 * us);
  EXPECT_EQ(b.idle_input_ns(), 50 * us);
  EXPECT_EQ(b.idle_host_other_ns(), 160 * us);
  EXPECT_EQ(b.idle_sync_blocked_ns() + b.idle_launch_bound_ns() + b.idle_input_ns() +
                b.idle_host_other_ns() + b.idle_cuda_call_ns(),
            b.gpu_idle_ns());
}

TEST_F(HandBuiltStep, KernelMedianAndP90UseNearestRank) {
  // Durations 1..10us, 190us, 200us: sorted index round(0.5 * 11) = 6 -> 7us,
  // round(0.9 * 11) = 10 -> 190us.
  const v1::StepReport report = Build();
  const auto& b = report.breakdown();
  EXPECT_EQ(b.kernel_median_ns(), 7 * us);
  EXPECT_EQ(b.kernel_p90_ns(), 190 * us);
}

TEST_F(HandBuiltStep, CountsAllocationsFreesAndCallsInsideTheWindowOnly) {
  const v1::StepReport r = Build();
  const auto& b = r.breakdown();
  EXPECT_EQ(b.alloc_count(), 2u);
  EXPECT_EQ(b.alloc_bytes(), 3u << 20);
  EXPECT_EQ(b.free_count(), 1u);
  EXPECT_EQ(b.free_bytes(), 512u << 10);
  EXPECT_EQ(b.api_call_count(), 4u);
  EXPECT_EQ(b.sync_count(), 1u);
  EXPECT_EQ(b.memset_count(), 0u);
  // 12 kernels + 1 memcpy + 1 sync + 4 API calls + 3 memory ops.
  EXPECT_EQ(r.event_count(), 21u);
}

TEST_F(HandBuiltStep, TopKernelsAreSortedByTotalTimeWithTensorCoreFlag) {
  const v1::StepReport r = Build();
  ASSERT_EQ(r.top_kernels_size(), 3);  // the kernels after the window are not listed
  const auto& first = r.top_kernels(0);
  EXPECT_THAT(first.name(), ::testing::StartsWith("sm90_xmma_gemm_bf16"));
  EXPECT_EQ(first.total_ns(), 200 * us);
  EXPECT_EQ(first.count(), 1u);
  EXPECT_TRUE(first.tensor_cores());

  const auto& second = r.top_kernels(1);
  EXPECT_EQ(second.name(), "ampere_sgemm_128x64_tn");
  EXPECT_EQ(second.total_ns(), 190 * us);  // the second launch at 1200us is outside
  EXPECT_EQ(second.count(), 1u);
  EXPECT_EQ(second.median_ns(), 190 * us);
  EXPECT_FALSE(second.tensor_cores());

  // Most launches but least time: last.
  const auto& third = r.top_kernels(2);
  EXPECT_EQ(third.name(), "void at::native::vectorized_elementwise_kernel<4>");
  EXPECT_EQ(third.count(), 10u);
  EXPECT_EQ(third.total_ns(), 55 * us);
  EXPECT_EQ(third.median_ns(), 6 * us);  // durations 1..10: index round(0.5 * 9) = 5
  EXPECT_FALSE(third.tensor_cores());

  EXPECT_THAT(DistinctKernelNames(ev_, strings_, StepWindow{3, 0, 1'000 * us, ""}),
              ::testing::ElementsAre("ampere_sgemm_128x64_tn",
                                     "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                                     "void at::native::vectorized_elementwise_kernel<4>"));
}

TEST_F(HandBuiltStep, ExplainsTheIdleWithAFinding) {
  // 65% of the wall idle, 40% of it in a stream sync: the report names a bottleneck.
  const v1::StepReport r = Build();
  ASSERT_GT(r.findings_size(), 0);
  EXPECT_EQ(r.primary_bottleneck(), r.findings(0).detector());
  EXPECT_NE(r.primary_bottleneck(), v1::none);
  for (int i = 1; i < r.findings_size(); ++i) {
    EXPECT_GE(r.findings(i - 1).lost_ns(), r.findings(i).lost_ns());
  }
}

TEST_F(StepReportTest, OnlyTheWindowPartOfAStraddlingKernelCounts) {
  Kernel("k", 900, 1'100);
  Kernel("k", -100, 50);
  const v1::StepReport report = Build();
  const auto& b = report.breakdown();
  EXPECT_EQ(b.kernel_ns(), 150 * us);
  EXPECT_EQ(b.gpu_busy_ns(), 150 * us);
  EXPECT_EQ(b.gpu_idle_ns(), 850 * us);
  EXPECT_EQ(b.kernel_count(), 2u);
}

TEST_F(StepReportTest, ShortGapsBetweenGpuWorkAreLaunchBound) {
  // Gaps of 10us and 20us (< kLaunchGapNs) between kernels, with no launch call recorded, are
  // launch-bound; the 100us gap is not, nor are the gaps at the window edges.
  static_assert(kLaunchGapNs == 30 * us);
  Kernel("k", 100, 200);
  Kernel("k", 210, 300);
  Kernel("k", 320, 400);
  Kernel("k", 500, 600);
  const v1::StepReport report = Build();
  const auto& b = report.breakdown();
  EXPECT_EQ(b.gpu_idle_ns(), 1'000 * us - 370 * us);
  EXPECT_EQ(b.idle_launch_bound_ns(), 30 * us);
  EXPECT_EQ(b.idle_sync_blocked_ns(), 0);
  // Before the first GPU work, with no CUDA call and no host range: waiting for input.
  EXPECT_EQ(b.idle_input_ns(), 100 * us);
  EXPECT_EQ(b.idle_host_other_ns(), b.gpu_idle_ns() - 30 * us - 100 * us);
}

TEST_F(StepReportTest, GapAtTheWindowEdgeIsNotLaunchBoundEvenWhenShort) {
  Kernel("k", 10, 990);  // idle [0,10) and [990,1000): short, but at the edges
  const v1::StepReport report = Build();
  const auto& b = report.breakdown();
  EXPECT_EQ(b.gpu_idle_ns(), 20 * us);
  EXPECT_EQ(b.idle_launch_bound_ns(), 0);
  EXPECT_EQ(b.idle_input_ns(), 10 * us);  // the leading edge, before any CUDA work
  EXPECT_EQ(b.idle_host_other_ns(), 10 * us);
}

TEST_F(StepReportTest, SyncTakesPrecedenceOverLaunchForTheSameIdleTime) {
  // A launch call overlapping a sync while the GPU is idle: the time counts once, as sync.
  Kernel("k", 0, 100);
  Api("cudaDeviceSynchronize", 100, 300);
  Api("cudaLaunchKernel", 250, 350);
  const v1::StepReport report = Build();
  const auto& b = report.breakdown();
  // Blocked [100,300); no drain after it: the GPU had finished before the call, so the host was
  // not ahead and what it does next is its own ([350,1000)), except the launch call [300,350).
  EXPECT_EQ(b.idle_sync_blocked_ns(), 200 * us);
  EXPECT_EQ(b.idle_launch_bound_ns(), 50 * us);
  EXPECT_EQ(b.idle_host_other_ns(), 650 * us);
  EXPECT_EQ(b.idle_sync_blocked_ns() + b.idle_launch_bound_ns() + b.idle_input_ns() +
                b.idle_host_other_ns() + b.idle_cuda_call_ns(),
            b.gpu_idle_ns());
}

TEST_F(StepReportTest, CommunicationKernelsAreBusyButNotCompute) {
  Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 100, 400, kStream13);
  Kernel("ampere_sgemm_128x64_tn", 300, 500, kStream7);
  ev_.memsets.push_back({600 * us, 650 * us, ++corr_, kStream7, MemoryKind::kDevice, true, 64, 0});
  const v1::StepReport report = Build();
  const auto& b = report.breakdown();
  EXPECT_EQ(b.communication_ns(), 300 * us);
  EXPECT_EQ(b.compute_busy_ns(), 250 * us);
  EXPECT_EQ(b.memset_ns(), 50 * us);
  EXPECT_EQ(b.memset_count(), 1u);
  EXPECT_EQ(b.gpu_busy_ns(), 450 * us);
}

TEST_F(StepReportTest, PageableCopyCallBlocksTheHost) {
  // cudaMemcpyAsync into pageable memory is synchronous: its API time is sync-blocked.
  ev_.apis.push_back({100 * us, 400 * us, 555, ApiDomain::kRuntime, 41,
                      strings_.Intern("cudaMemcpyAsync"), kThread, 0});
  ev_.memcpys.push_back({350 * us, 400 * us, 555, kStream7, CopyKind::kDtoH, MemoryKind::kDevice,
                         MemoryKind::kPageable, true, 1u << 20, 0, 0});
  const v1::StepReport report = Build();
  const auto& b = report.breakdown();
  EXPECT_EQ(b.host_sync_blocked_ns(), 300 * us);
  // Blocked [100,350) while the GPU idles, then the drain, as long as the copy it waited for
  // ([400,450)); the rest of the step is the host's.
  EXPECT_EQ(b.idle_sync_blocked_ns(), 250 * us + 50 * us);
  EXPECT_EQ(b.memcpy_dtoh_ns(), 50 * us);
  EXPECT_EQ(b.memcpy_not_overlapped_ns(), 50 * us);
}

TEST_F(StepReportTest, EmptyStepIsAllIdle) {
  const v1::StepReport r = Build();
  const auto& b = r.breakdown();
  EXPECT_EQ(b.gpu_idle_ns(), 1'000 * us);
  EXPECT_EQ(b.idle_input_ns(), 1'000 * us);  // no CUDA work at all: all "before the first"
  EXPECT_EQ(b.idle_host_other_ns(), 0);
  // ...and no verdict: nothing ran on the GPU.
  EXPECT_TRUE(r.data_quality().insufficient());
  EXPECT_EQ(r.primary_bottleneck(), v1::insufficient_data);
  EXPECT_EQ(b.kernel_median_ns(), 0);
  EXPECT_EQ(b.kernel_p90_ns(), 0);
  EXPECT_EQ(r.event_count(), 0u);
  EXPECT_EQ(r.top_kernels_size(), 0);
}

TEST_F(StepReportTest, TopKernelsAreCappedAndTiesBrokenDeterministically) {
  for (int i = 0; i < kTopKernels + 5; ++i) {
    Kernel("kernel_" + std::to_string(i), 10 * i, 10 * i + 5 + (i % 3));
  }
  const v1::StepReport r = Build();
  ASSERT_EQ(r.top_kernels_size(), kTopKernels);
  for (int i = 1; i < r.top_kernels_size(); ++i) {
    EXPECT_GE(r.top_kernels(i - 1).total_ns(), r.top_kernels(i).total_ns());
  }
  EXPECT_EQ(r.top_kernels(0).total_ns(), 7 * us);
}

// Class times are the busy time each class holds, clipped to the window: the collective under
// the GEMM holds none of it (only exposed communication is comm's), and the shares add up to 100 %
// of the kernels' busy time.
TEST_F(StepReportTest, KernelClassesAreTheBusyTimeEachHoldsMostTimeFirst) {
  Kernel("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn", 0, 400, kStream7);
  Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 100, 300, kStream13);  // under the GEMM
  Kernel("void at::native::vectorized_elementwise_kernel<4>", 400, 500, kStream7);
  Kernel("softmax_warp_forward", 500, 600, kStream7);
  Kernel("triton_poi_fused_add_0", 950, 1'100, kStream7);  // 50 us inside the window
  const v1::StepReport r = Build();
  ASSERT_EQ(r.kernel_classes_size(), 4);
  EXPECT_EQ(r.kernel_classes(0).kernel_class(), "gemm_tc");
  EXPECT_EQ(r.kernel_classes(0).ns(), 400 * us);
  EXPECT_EQ(r.kernel_classes(1).kernel_class(), "elementwise");
  EXPECT_EQ(r.kernel_classes(1).ns(), 200 * us);
  EXPECT_EQ(r.kernel_classes(1).count(), 2u);
  EXPECT_EQ(r.kernel_classes(2).kernel_class(), "triton");
  EXPECT_EQ(r.kernel_classes(2).ns(), 50 * us);
  EXPECT_EQ(r.kernel_classes(3).kernel_class(), "comm");
  EXPECT_EQ(r.kernel_classes(3).ns(), 0);
  EXPECT_EQ(r.kernel_classes(3).count(), 1u);
  EXPECT_DOUBLE_EQ(r.kernel_classes(0).share(), 400.0 / 650.0);
}

}  // namespace
}  // namespace gpuspy::analysis
