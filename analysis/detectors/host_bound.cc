// Host-bound: the GPU waits for the host while the host does work that is neither CUDA calls
// (launch_storm, sync_stall) nor the input pipeline (input_stall): Python between launches,
// metric computation, logging, CPU-heavy ops such as DDP's bucket (un)flattening or a foreach
// optimizer on the host. The evidence says how long, in how many gaps, between which CUDA calls
// (with their call sites when known) and what the host was running: host ranges, the user's
// Python lines that ran in the gaps (a with_stack trace's frames), and the lines the host sampler
// caught inside them (host_activity.h).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/detectors/detectors.h"
#include "analysis/call_site_summary.h"
#include "analysis/host_activity.h"
#include "analysis/step_report.h"

namespace gpuspy::analysis {
namespace {

constexpr double kMinHostBoundShare = 0.10;  // GPU idle waiting for non-CUDA host work
constexpr size_t kListedHostRanges = 3;      // host ranges named in the evidence
constexpr size_t kTopResumeSites = 3;        // call sites where the host came back, in the evidence
constexpr size_t kTopHotLines = 3;           // sampled Python lines inside the gaps, in the evidence
// A sampled line names the gaps in the title and hint only with this share of their samples, and
// at least this many of them (fewer say little about where the time went).
constexpr double kMinHotLineShare = 0.25;
constexpr uint32_t kMinHotLineSamples = 3;

// Where the host came back to the GPU after its gaps: the call site of the CUDA call that ends
// each gap (live capture names it whenever a launch follows a host gap; call_sites.h), with the
// host time before it, most time first. Gaps ended by a call without a site are left out.
struct ResumeSite {
  std::string site;
  uint64_t gaps = 0;
  int64_t ns = 0;
};
std::vector<ResumeSite> ResumeSites(const StepContext& ctx, const IntervalSet& gaps) {
  std::vector<const ApiEvent*> calls;
  for (const ApiEvent& a : ctx.events.apis) {
    if (ctx.InWindow(a.start_ns, a.end_ns)) calls.push_back(&a);
  }
  std::sort(calls.begin(), calls.end(),
            [](const ApiEvent* x, const ApiEvent* y) { return x->start_ns < y->start_ns; });
  std::map<StringRef, ResumeSite> by_site;
  for (const Interval& g : gaps.intervals()) {
    auto next = std::lower_bound(calls.begin(), calls.end(), g.end_ns,
                                 [](const ApiEvent* a, int64_t t) { return a->start_ns < t; });
    // Only the call that ends the gap, and only when it has a site.
    if (next == calls.end() || (*next)->start_ns > g.end_ns + kLaunchGapNs || (*next)->call_site == 0) {
      continue;
    }
    ResumeSite& r = by_site[(*next)->call_site];
    r.gaps++;
    r.ns += g.length();
  }
  std::vector<ResumeSite> out;
  for (auto& [ref, r] : by_site) {
    r.site = std::string(ctx.strings.Get(ref));
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const ResumeSite& a, const ResumeSite& b) { return a.ns > b.ns; });
  if (out.size() > kTopResumeSites) out.resize(kTopResumeSites);
  return out;
}

// "cudaLaunchKernel at train.py:57 f" / "cudaLaunchKernel"
std::string CallName(const StepContext& ctx, const ApiEvent* a) {
  if (a == nullptr) return "the step boundary";
  const std::string name(ctx.strings.Get(a->name));
  return a->call_site == 0 ? name : name + " at " + std::string(ctx.strings.Get(a->call_site));
}

bool LooksLikeOptimizer(const std::string& name) {
  return name.find("Optimizer.step") != std::string::npos || name.find("_foreach_") != std::string::npos;
}

}  // namespace

std::optional<v1::Finding> DetectHostBound(const StepContext& ctx) {
  // The drain after a blocking call is the sync's (idle_attribution.h), not in host_other.
  const IntervalSet& waiting = ctx.idle.host_other;
  const int64_t waited = waiting.TotalLength();
  if (ctx.ShareOfWall(waited) < kMinHostBoundShare) return std::nullopt;
  const auto& gaps = waiting.intervals();
  const Interval longest = *std::max_element(gaps.begin(), gaps.end(), [](const Interval& x, const Interval& y) {
    return x.length() < y.length();
  });
  const GapNeighbours around = CallsAround(ctx.events, longest);
  const std::vector<HostActivity> doing =
      ctx.host_activity().During(waiting, kListedHostRanges);
  // The user's lines that ran in the gaps (a with_stack=True trace's Python frames).
  const std::vector<HostActivity> lines =
      ctx.host_activity().During(waiting, kTopHotLines, HostView::kUserLines);
  const HotLines hot = HotLinesDuring(ctx.events, ctx.strings, waiting, kTopHotLines);
  const HotLine* hottest = nullptr;
  if (!hot.lines.empty() && hot.lines.front().samples >= kMinHotLineSamples &&
      hot.lines.front().samples >= kMinHotLineShare * hot.samples) {
    hottest = &hot.lines.front();
  }

  v1::Finding f;
  f.set_detector(v1::host_bound);
  std::string title = absl::StrCat("GPU waited ", FormatMs(waited), " (",
                                   FormatPercent(ctx.ShareOfWall(waited)), " of the step) for the host in ",
                                   gaps.size(), gaps.size() == 1 ? " gap" : " gaps");
  // Where in the user's code: the sampled line, else the Python frame that ran longest.
  const std::string line = hottest != nullptr ? hottest->site : lines.empty() ? "" : lines.front().name;
  if (!doing.empty()) {
    absl::StrAppend(&title, ", mostly in ", doing.front().name);
    if (!line.empty() && line != doing.front().name) absl::StrAppend(&title, " at ", line);
  } else if (!line.empty()) {
    absl::StrAppend(&title, ", mostly at ", line);
  }
  f.set_title(title);
  f.set_lost_ns(waited);
  f.set_severity(SeverityFor(ctx.ShareOfWall(waited)));
  AddEvidence(&f, "idle_host_other", Ns(waited));
  AddEvidence(&f, "gaps", Count(gaps.size()));
  AddEvidence(&f, "longest_gap", Ns(longest.length()),
              absl::StrCat(" at +", FormatMs(longest.start_ns - ctx.step.start_ns), ", between ",
                           CallName(ctx, around.before), " and ", CallName(ctx, around.after)));
  std::vector<std::string> what;
  for (const HostActivity& h : doing) {
    AddEvidence(&f, "host_activity", absl::StrCat(h.name, " = "), Ns(h.ns));
    what.push_back(h.name);
  }
  AddHostLineEvidence(&f, lines, " of the gaps");
  for (const HotLine& h : hot.lines) {
    AddEvidence(&f, "hot_line",
                absl::StrCat(h.site, ": ", h.samples, " of ", hot.samples, " samples, ~"), Ns(h.ns),
                " of the gaps");
    f.mutable_evidence(f.evidence_size() - 1)->set_call_site(h.site);  // the viewer links it
  }
  if (doing.empty() && hot.samples == 0 && lines.empty()) {
    AddEvidence(&f, "host_activity", "not recorded (no host ranges or host samples: capture with "
                                     "the host sampler on, NVTX ranges, or import a profiler trace "
                                     "with CPU ops to see it)");
  }
  const std::vector<ResumeSite> resumed = ResumeSites(ctx, waiting);
  for (const ResumeSite& r : resumed) {
    AddEvidence(&f, "resumed_at", absl::StrCat(r.site, " x", r.gaps, " after "), Ns(r.ns),
                " of host work");
    f.mutable_evidence(f.evidence_size() - 1)->set_call_site(r.site);  // the viewer links it
  }
  std::string hint =
      "the GPU runs out of work while Python runs between CUDA calls: move per-step host work "
      "out of the loop (metrics, logging, .tolist() processing every N steps), cut per-op CPU "
      "overhead with torch.compile or CUDA graphs, or overlap it with GPU work";
  if (!doing.empty() && LooksLikeOptimizer(doing.front().name)) {
    hint = "the optimizer step is host-bound: use a fused optimizer (e.g. torch.optim.AdamW(..., "
           "fused=True) or foreach=True), or capture it with torch.compile / CUDA graphs";
  }
  if (hottest != nullptr) {
    hint = absl::StrCat("the host spends ~", FormatPercent(static_cast<double>(hottest->samples) / hot.samples),
                        " of these gaps at ", hottest->site, ": ", hint);
  } else if (!lines.empty()) {
    hint = absl::StrCat("the host spends ", FormatMs(lines.front().ns), " of these gaps in ",
                        lines.front().name, ": ", hint);
  } else if (!resumed.empty()) {
    hint = absl::StrCat("the host comes back to the GPU at ", resumed.front().site,
                        ": the host work is what runs before that line; ", hint);
  }
  f.set_fix_hint(hint);
  return f;
}

}  // namespace gpuspy::analysis
