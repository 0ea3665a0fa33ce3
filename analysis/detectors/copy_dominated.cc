// Copy-dominated step: memcpy time that no kernel overlaps takes a large share of the step.
#include "absl/container/flat_hash_map.h"
#include "analysis/blocking_calls.h"
#include "analysis/call_site_summary.h"
#include "analysis/detectors/detectors.h"
#include "model/units.h"

namespace gpuspy::analysis {
namespace {

constexpr double kMinExposedCopyShare = 0.15;  // copy time not overlapped with compute
constexpr size_t kListedCopySites = 3;         // copy call sites in the evidence
// An async copy may run after the step boundary its call preceded; look this far back for it.
constexpr int64_t kCopyCallLeadNs = 10'000'000;

}  // namespace

std::optional<v1::Finding> DetectCopyDominated(const StepContext& ctx) {
  const auto& b = ctx.breakdown;
  if (ctx.ShareOfWall(b.memcpy_not_overlapped_ns()) < kMinExposedCopyShare) return std::nullopt;

  uint64_t pageable_bytes = 0, pinned_bytes = 0, sync_copies = 0, copies = 0;
  uint64_t htod_bytes = 0, dtoh_bytes = 0;
  int64_t copy_time_ns = 0;
  for (const MemcpyEvent& m : ctx.events.memcpys) {
    if (!ctx.InWindow(m.start_ns, m.end_ns)) continue;
    ++copies;
    copy_time_ns += m.end_ns - m.start_ns;
    (IsPageableCopy(m) ? pageable_bytes : pinned_bytes) += m.bytes;
    if (!m.async) ++sync_copies;
    if (m.copy_kind == CopyKind::kHtoD) htod_bytes += m.bytes;
    if (m.copy_kind == CopyKind::kDtoH) dtoh_bytes += m.bytes;
  }
  v1::Finding f;
  f.set_detector(v1::copy_dominated);
  f.set_title("copies not overlapped with compute take " + FormatMs(b.memcpy_not_overlapped_ns()) +
              " (" + FormatPercent(ctx.ShareOfWall(b.memcpy_not_overlapped_ns())) +
              " of the step)");
  f.set_lost_ns(b.memcpy_not_overlapped_ns());
  f.set_severity(SeverityFor(ctx.ShareOfWall(b.memcpy_not_overlapped_ns())));
  AddEvidence(&f, "copies", Count(copies), " (" + std::to_string(sync_copies) + " synchronous)");
  AddEvidence(&f, "htod", Ns(b.memcpy_htod_ns()), ", " + FormatBytes(htod_bytes));
  AddEvidence(&f, "dtoh", Ns(b.memcpy_dtoh_ns()), ", " + FormatBytes(dtoh_bytes));
  AddEvidence(&f, "pageable_bytes", Bytes(pageable_bytes));
  AddEvidence(&f, "pinned_bytes", Bytes(pinned_bytes));
  if (copy_time_ns > 0) {
    AddEvidence(&f, "achieved_bandwidth",
                BytesPerSecond((pageable_bytes + pinned_bytes) * 1e9 /
                               static_cast<double>(copy_time_ns)));
  }
  std::string hint;
  if (pageable_bytes > pinned_bytes) {
    hint = "copies from pageable memory are staged and synchronous: use pinned memory "
           "(DataLoader(pin_memory=True)) and .to(device, non_blocking=True); ";
  }
  hint += "overlap copies with compute by prefetching the next batch on a side stream, and keep "
          "data that is reused on the GPU";
  // The calls that issued the step's copies, by call site.
  absl::flat_hash_map<uint64_t, CallBytes> copy_calls;  // by the call's correlation id
  for (const MemcpyEvent& m : ctx.events.memcpys) {
    if (!ctx.InWindow(m.start_ns, m.end_ns)) continue;
    CallBytes& b = copy_calls[m.correlation_id];
    b.bytes += m.bytes;
    if (IsPageableCopy(m)) b.pageable_bytes += m.bytes;
  }
  const std::vector<CallSiteCount> sites = CallSitesOf(
      ctx.events, ctx.strings, {ctx.step.start_ns - kCopyCallLeadNs, ctx.step.end_ns},
      [&](const ApiEvent& a) { return copy_calls.contains(a.correlation_id); }, kListedCopySites,
      [&](const ApiEvent& a) { return copy_calls.at(a.correlation_id); });
  for (const CallSiteCount& c : sites) AddCallSiteEvidence(&f, "copy_site", c);
  // Where in the user's code: the line that copies the most bytes.
  if (!sites.empty() && sites.front().bytes > 0) {
    hint = sites.front().site + " copies " + FormatBytes(sites.front().bytes) + " in this step" +
           (sites.front().pageable_bytes > 0 ? " (" + FormatBytes(sites.front().pageable_bytes) + " pageable)" : "") +
           ": " + hint;
  }
  f.set_fix_hint(hint);
  return f;
}

}  // namespace gpuspy::analysis
