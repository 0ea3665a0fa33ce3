#include "analysis/detectors/memory_growth.h"

#include <algorithm>
#include <map>
#include <string>

#include "analysis/detectors/step_context.h"
#include "absl/strings/str_cat.h"
#include "analysis/memory_usage.h"

namespace gpuspy::analysis {
namespace {

// The run's allocation sites summed over its steps, most bytes first.
std::vector<v1::AllocationSite> RunSites(const std::vector<v1::StepReport*>& run) {
  std::map<std::string, v1::AllocationSite> by_site;
  for (const v1::StepReport* r : run) {
    for (const v1::AllocationSite& s : r->memory().sites()) {
      v1::AllocationSite& acc = by_site[s.call_site()];
      acc.set_call_site(s.call_site());
      acc.set_bytes(acc.bytes() + s.bytes());
      acc.set_count(acc.count() + s.count());
    }
  }
  std::vector<v1::AllocationSite> out;
  for (auto& [name, s] : by_site) out.push_back(std::move(s));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.bytes() > b.bytes();
  });
  if (out.size() > static_cast<size_t>(kMaxAllocationSites)) out.resize(kMaxAllocationSites);
  return out;
}

}  // namespace

std::optional<GrowthRun> FindGrowthRun(int64_t start_level, const std::vector<int64_t>& levels) {
  std::optional<GrowthRun> best;
  size_t growing = 0;
  // Backwards from the last step: the stretch must still be growing when the capture ends (a
  // level that grew early and then held is the allocator warming up, or a cache that filled).
  for (size_t k = levels.size(); k-- > 0;) {
    const int64_t before = k == 0 ? start_level : levels[k - 1];
    const int64_t delta = levels[k] - before;
    if (delta <= -kMinStepGrowthBytes) break;
    if (delta >= kMinStepGrowthBytes) ++growing;
    const size_t steps = levels.size() - k;
    const int64_t growth = levels.back() - before;
    const bool enough_share =
        static_cast<double>(growing) >= kGrowthStepShare * static_cast<double>(steps);
    if (growing >= kMinGrowingSteps && enough_share && growth >= kMinGrowthBytes) {
      best = GrowthRun{k, k, steps, growing, growth};
    }
  }
  if (best) {
    // The onset is the stretch's first growing step (a longer stretch may begin with flat ones).
    for (size_t i = best->first; i < levels.size(); ++i) {
      const int64_t before = i == 0 ? start_level : levels[i - 1];
      if (levels[i] - before >= kMinStepGrowthBytes) {
        best->onset = i;
        break;
      }
    }
  }
  return best;
}

void DetectMemoryGrowth(const std::vector<v1::StepReport*>& steps) {
  std::vector<v1::StepReport*> steady;
  for (v1::StepReport* r : steps) {
    if (r->steady_state() && r->has_memory()) steady.push_back(r);
  }
  if (steady.empty()) return;
  const bool has_allocated = std::all_of(steady.begin(), steady.end(), [](const v1::StepReport* r) {
    return r->memory().has_allocated();
  });
  std::vector<int64_t> reserved, allocated;
  for (const v1::StepReport* r : steady) {
    reserved.push_back(r->memory().reserved_end_bytes());
    allocated.push_back(r->memory().allocated_end_bytes());
  }
  const v1::StepMemory& first = steady.front()->memory();
  const std::optional<GrowthRun> reserved_run = FindGrowthRun(first.reserved_start_bytes(), reserved);
  const std::optional<GrowthRun> allocated_run =
      has_allocated ? FindGrowthRun(first.allocated_end_bytes() - first.allocated_growth_bytes(),
                                    allocated)
                    : std::nullopt;
  // Live tensors growing is a leak whatever the reserved memory does (the cache may absorb it
  // for a while); reserved memory growing alone is the allocator's doing.
  const std::optional<GrowthRun>& run = allocated_run ? allocated_run : reserved_run;
  if (!run) return;
  const bool leak = allocated_run.has_value();
  const std::string level = allocated_run ? "allocated" : "reserved";
  const int64_t onset_step = steady[run->onset]->step().number();
  const std::vector<v1::StepReport*> in_run(steady.begin() + run->first, steady.end());
  const std::vector<v1::AllocationSite> sites = RunSites(in_run);
  const int64_t per_step = run->growth_bytes / static_cast<int64_t>(run->steps);

  for (size_t i = run->onset; i < steady.size(); ++i) {
    v1::StepReport* r = steady[i];
    const v1::StepMemory& m = r->memory();
    v1::Finding* f = r->add_findings();
    f->set_detector(v1::memory_growth);
    f->set_title("device memory (" + level + ") grows " + FormatBytes(per_step) +
                 " per step since step " + std::to_string(onset_step) + ": " +
                 Render(SignedBytes(run->growth_bytes)) + " over " + std::to_string(run->steps) +
                 " steps, " + FormatBytes(static_cast<uint64_t>(m.reserved_end_bytes())) +
                 " reserved now");
    // Growth costs no time until it ends in an out-of-memory error.
    f->set_lost_ns(0);
    f->set_severity(v1::warning);
    AddEvidence(f, "since_step", std::to_string(onset_step));
    AddEvidence(f, "growing_steps", Count(run->growing_steps),
                absl::StrCat(" of ", run->steps));
    AddEvidence(f, "growth_" + level, SignedBytes(run->growth_bytes));
    AddEvidence(f, "this_step_reserved", SignedBytes(m.reserved_growth_bytes()));
    if (m.has_allocated()) {
      AddEvidence(f, "this_step_allocated", SignedBytes(m.allocated_growth_bytes()));
      AddEvidence(f, "allocated_now", Bytes(static_cast<int64_t>(m.allocated_end_bytes())));
    }
    AddEvidence(f, "reserved_peak", Bytes(static_cast<int64_t>(m.reserved_peak_bytes())));
    AddEvidence(f, "source", m.source());
    for (const v1::AllocationSite& s : sites) {
      AddEvidence(f, "allocated_at", s.call_site() + " ", Bytes(static_cast<int64_t>(s.bytes())),
                  absl::StrCat(" in ", s.count(), " allocations"));
      f->mutable_evidence(f->evidence_size() - 1)->set_call_site(s.call_site());
    }
    if (leak) {
      f->set_fix_hint(
          "live tensors accumulate across steps: something keeps references to GPU tensors "
          "(appending loss instead of loss.item() to a list, caches keyed by step, tensors "
          "stored on self); an out-of-memory error will follow. torch.cuda.memory._record_memory_"
          "history() shows who holds them");
    } else if (m.has_allocated()) {
      f->set_fix_hint(
          "reserved memory grows while live tensors do not: the caching allocator fragments "
          "(changing tensor shapes); try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True and "
          "stable (bucketed) shapes");
    } else {
      f->set_fix_hint(
          "cudaMalloc'd memory keeps growing: a leak (references to GPU tensors kept across "
          "steps, e.g. appending loss instead of loss.item()) or allocator fragmentation "
          "(changing shapes: try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True); "
          "torch.cuda.memory_allocated() per step tells them apart");
    }
  }
}

}  // namespace gpuspy::analysis
