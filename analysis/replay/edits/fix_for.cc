// Which fix each detector's finding names, and the helpers the edits share.
#include <algorithm>
#include <map>

#include "analysis/replay/edits/edits.h"
#include "analysis/stats.h"

namespace gpuspy::analysis::replay {

std::optional<Fix> FixFor(v1::Detector detector, const StepContext& ctx, const StepGraph& g) {
  if (detector == v1::sync_stall) return SyncFix(ctx, g);
  if (detector == v1::host_bound) return HostWorkFix(ctx, g);
  if (detector == v1::input_stall) return InputFix(ctx, g);
  if (detector == v1::copy_dominated) return CopyFix(ctx, g);
  if (detector == v1::launch_storm) return LaunchStormFix(ctx, g);
  if (detector == v1::alloc_churn) return AllocatorFix(ctx, g);
  if (detector == v1::cuda_api_bound) return DriverCallFix(ctx, g);
  if (detector == v1::fp32_gemm) return TensorCoreFix(ctx, g);
  if (detector == v1::unfused_elementwise) return ElementwiseFusionFix(ctx, g);
  if (detector == v1::unfused_attention) return AttentionFusionFix(ctx, g);
  // gpu_bound, gpu_idle, memory_growth, new_kernels and the communication findings state no
  // single-step edit (the cross-rank ones are the wait beyond the median rank).
  return std::nullopt;
}

std::vector<Fix> PartialFixesFor(v1::Detector detector, const StepContext& ctx,
                                 const StepGraph& g) {
  std::vector<Fix> out;
  if (detector == v1::copy_dominated) {
    if (std::optional<Fix> f = PinnedCopyFix(ctx, g)) out.push_back(std::move(*f));
  }
  return out;
}

std::pair<int, int> LaunchOf(const StepGraph& g, int i) { return {g.ops[i].thread, g.ops[i].call}; }

void DropLaunches(const StepGraph& g, const std::vector<int>& ops, int keep, StepEdit* edit) {
  // The host work before each op's launch call, on the launch's thread.
  struct Dropped {
    uint32_t thread_id;
    int64_t from, to;  // the host work before the call
  };
  std::vector<Dropped> dropped;
  std::vector<int64_t> per_op;
  for (int i : ops) {
    if (g.ops[i].carried()) continue;
    const auto [t, c] = LaunchOf(g, i);
    const HostThread& thread = g.threads[t];
    const HostCall& call = thread.calls[c];
    if (call.launches.size() != 1) continue;  // the call launches more than this op
    const int64_t from = c == 0 ? g.window.start_ns : thread.calls[c - 1].end_ns;
    per_op.push_back(std::max<int64_t>(0, call.start_ns - from));
    if (i == keep) continue;
    edit->call_cost[{t, c}] = 0;
    if (call.start_ns > from) dropped.push_back({thread.thread_id, from, call.start_ns});
  }
  const int64_t typical = stats::Median(per_op);
  const auto limit = std::max<int64_t>(kMaxPerOpHostNs, static_cast<int64_t>(kPerOpSpread * static_cast<double>(typical)));
  std::map<uint32_t, std::vector<Interval>> per_op_host;
  for (const Dropped& d : dropped) {
    const int64_t removed = d.to - d.from <= limit ? d.to - d.from : std::min(d.to - d.from, typical);
    if (removed > 0) per_op_host[d.thread_id].push_back({d.to - removed, d.to});
  }
  StepEdit gaps;
  for (auto& [tid, spans] : per_op_host) gaps.removed_host[tid] = IntervalSet::Union(std::move(spans));
  edit->Merge(gaps);
}

std::vector<std::vector<int>> KernelsByStream(const StepGraph& g) {
  std::vector<std::vector<int>> out(g.streams.size());
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (!g.ops[i].carried() && g.ops[i].kernel != nullptr) out[g.ops[i].stream].push_back(static_cast<int>(i));
  }
  for (std::vector<int>& s : out) {
    std::stable_sort(s.begin(), s.end(), [&](int a, int b) { return g.ops[a].start_ns < g.ops[b].start_ns; });
  }
  return out;
}

}  // namespace gpuspy::analysis::replay
