#include "exporters/html_report/html_sections.h"

#include <vector>

#include "absl/strings/str_join.h"
#include "analysis/detector_names.h"
#include "analysis/hardware/floor_text.h"
#include "analysis/step_kind.h"
#include "analysis/text_form.h"
#include "exporters/html_report/html_text.h"
#include "viewer/palette/kernel_classes.h"
#include "viewer/palette/time_causes.h"

namespace gpuspy::exporters::html {
namespace {

std::string Bytes(int64_t b) { return absl::StrFormat("%.1f MiB", static_cast<double>(b) / (1 << 20)); }

}  // namespace

std::string PartsBar(const google::protobuf::RepeatedPtrField<v1::TimePart>& parts, int64_t wall_ns) {
  std::string out = "<div class=bar>";
  for (const v1::TimePart& p : parts) {
    if (p.ns() <= 0 || wall_ns <= 0) continue;
    const palette::TimeCauseStyle& style = palette::StyleOf(p.cause());
    absl::StrAppend(&out, "<span data-cause=\"", v1::TimeCause_Name(p.cause()), "\" data-ns=\"", p.ns(),
                    "\" style=\"width:", Width(p.ns(), wall_ns), ";background:", style.color,
                    "\" title=\"", style.label, " ", Ms(p.ns()), " ms\"></span>");
  }
  absl::StrAppend(&out, "</div>");
  return out;
}

std::string CausesLegend() {
  std::string out = "<p class=legend>";
  for (const palette::TimeCauseStyle& style : palette::TimeCauseStyles()) {
    absl::StrAppend(&out, "<span><i style=\"background:", style.color, "\"></i>", style.label, "</span> ");
  }
  absl::StrAppend(&out, "</p>");
  return out;
}

std::string RanksSection(const v1::JobSummary& s) {
  if (s.ranks().empty()) return "";
  std::string h = absl::StrCat(
      "<h2 id=ranks>Where each rank's step goes</h2><p>Median over the steady steps; communication "
      "is drawn in the browns: <i class=sw style=\"background:",
      palette::StyleOf(v1::TIME_CAUSE_COMM_WAIT).color, "\"></i> waiting for a rank, <i class=sw style=\"background:",
      palette::StyleOf(v1::TIME_CAUSE_COMM_TRANSFER).color,
      "\"></i> moving data.</p><table><tr><th>Rank<th>Median step ms<th>Where it goes<th>Exposed "
      "communication<th>Of it waiting<th>Primary bottleneck</tr>");
  for (const v1::RankSummary& r : s.ranks()) {
    absl::StrAppend(&h, "<tr class=rank data-rank=\"", r.rank(), "\" data-exposed-comm-ns=\"",
                    r.median_exposed_comm_ns(), "\"><td class=n>", r.rank(), "<td class=n>",
                    Ms(r.median_wall_ns()), "<td>", PartsBar(r.median_parts(), r.median_wall_ns()),
                    "<td class=\"n comm\" style=\"color:", palette::StyleOf(v1::TIME_CAUSE_COMM_WAIT).color,
                    "\">", Ms(r.median_exposed_comm_ns()), " ms (",
                    Pct(r.median_exposed_comm_ns(), r.median_wall_ns()), ")<td class=n>",
                    Ms(r.median_wait_ns()), " ms<td>", Escape(analysis::DetectorName(r.primary_bottleneck())), "</tr>");
  }
  absl::StrAppend(&h, "</table>");
  return h;
}

std::string GpuTimeSection(const v1::JobSummary& s) {
  if (s.kernel_classes().empty()) return "";
  std::string bar = "<div class=\"bar wide\">", rows;
  for (const v1::KernelClassTime& c : s.kernel_classes()) {
    const palette::KernelClassStyle& style = palette::StyleOfClass(c.kernel_class());
    const std::string pct = absl::StrFormat("%.0f%%", 100 * c.share());
    absl::StrAppend(&bar, "<span data-class=\"", Escape(c.kernel_class()), "\" style=\"width:",
                    absl::StrFormat("%.3f%%", 100 * c.share()), ";background:", style.color, "\" title=\"",
                    style.label, " ", pct, "\"></span>");
    absl::StrAppend(&rows, "<tr class=kernel-class data-class=\"", Escape(c.kernel_class()), "\" data-ns=\"",
                    c.ns(), "\"><td><i class=sw style=\"background:", style.color, "\"></i>", style.label,
                    "<td class=n>", Ms(c.ns()), "<td class=n>", c.count(), "<td class=n>", pct, "</tr>");
  }
  return absl::StrCat("<h2 id=gpu-time>GPU time by kernel class</h2>", bar,
                      "</div><table><tr><th>Class<th>ms<th>Kernels<th>Share</tr>", rows, "</table>");
}

std::string TopKernelsSection(const v1::JobSummary& s) {
  if (s.top_kernels().empty()) return "";
  std::string h = "<h2 id=top-kernels>Top kernels</h2><table><tr><th>Kernel<th>Count<th>Total ms"
                  "<th>Median ms<th>Tensor cores</tr>";
  for (const v1::KernelStat& k : s.top_kernels()) {
    absl::StrAppend(&h, "<tr class=kernel data-total-ns=\"", k.total_ns(), "\"><td title=\"", Escape(k.name()),
                    "\"><code>", Escape(analysis::ClipName(k.name(), 100)), "</code><td class=n>", k.count(),
                    "<td class=n>", Ms(k.total_ns()), "<td class=n>", Ms(k.median_ns()), "<td>",
                    k.tensor_cores() ? "yes" : "no", "</tr>");
  }
  absl::StrAppend(&h, "</table>");
  return h;
}

std::string FloorSection(const v1::JobSummary& summary, const v1::GetStepReportResponse& reports,
                         const std::map<uint64_t, std::string>& labels) {
  const std::string job = analysis::JobFloorLine(summary.floor());
  if (job.empty()) return "";
  std::string rows;
  for (const v1::StepReport& r : reports.reports()) {
    const v1::StepFloor& f = r.floor();
    if (f.work_size() == 0) continue;
    absl::StrAppend(&rows, "<tr class=floor data-process=\"", r.step().process_id(), "\" data-step=\"",
                    r.step().number(), "\" data-floor-ns=\"", f.floor_ns(), "\" data-mfu=\"",
                    absl::StrFormat("%.4f", f.mfu()), "\"><td class=n>", Escape(Label(labels, r.step().process_id())),
                    "<td class=n>", r.step().number(), "<td class=n>", Ms(r.breakdown().wall_ns()), "<td class=n>",
                    f.floor_ns() > 0 ? Ms(f.floor_ns()) : "-", "<td class=n>",
                    f.device_known() ? absl::StrFormat("%.0f%%", 100 * f.mfu()) : "-", "<td>",
                    Escape(absl::StrJoin(analysis::WorkLines(f), "; ")), "</tr>");
  }
  std::string h = absl::StrCat("<h2 id=floor>Hardware floor</h2><p class=floor-job>", Escape(job), "</p>");
  if (!rows.empty()) {
    absl::StrAppend(&h, "<table><tr><th>Rank<th>Step<th>Wall ms<th>Floor ms<th>MFU<th>Work</tr>", rows,
                    "</table>");
  }
  // The GPU's own counters, where the capture sampled them (GPUSPY_COUNTERS=1).
  std::string counter_rows;
  for (const v1::StepReport& r : reports.reports()) {
    const std::vector<std::string> lines = analysis::CounterLines(r.floor());
    if (lines.empty()) continue;
    const v1::CounterReadings& c = r.floor().counters().step();
    absl::StrAppend(&counter_rows, "<tr class=counters data-process=\"", r.step().process_id(),
                    "\" data-step=\"", r.step().number(), "\" data-tensor-pct=\"",
                    absl::StrFormat("%.2f", c.tensor_active_pct()), "\" data-dram-pct=\"",
                    absl::StrFormat("%.2f", c.dram_throughput_pct()), "\"><td class=n>",
                    Escape(Label(labels, r.step().process_id())), "<td class=n>", r.step().number(),
                    "<td>", Escape(absl::StrJoin(lines, "; ")), "</tr>");
  }
  if (!counter_rows.empty()) {
    absl::StrAppend(&h, "<table><tr><th>Rank<th>Step<th>Counters</tr>", counter_rows, "</table>");
  }
  return h;
}

std::string MemorySection(const v1::GetStepReportResponse& reports,
                          const std::map<uint64_t, std::string>& labels) {
  std::string rows;
  for (const v1::StepReport& r : reports.reports()) {
    if (!r.has_memory()) continue;
    const v1::StepMemory& m = r.memory();
    absl::StrAppend(&rows, "<tr class=memory data-process=\"", r.step().process_id(), "\" data-step=\"",
                    r.step().number(), "\" data-reserved-peak-bytes=\"", m.reserved_peak_bytes(),
                    "\"><td class=n>", Escape(Label(labels, r.step().process_id())), "<td class=n>",
                    r.step().number(), "<td class=n>", Bytes(m.reserved_peak_bytes()), "<td class=n>",
                    absl::StrFormat("%+.1f MiB", static_cast<double>(m.reserved_growth_bytes()) / (1 << 20)),
                    "<td class=n>", m.has_allocated() ? Bytes(m.allocated_peak_bytes()) : "-", "<td>",
                    Escape(m.source()), "</tr>");
  }
  if (rows.empty()) return "";
  return absl::StrCat("<h2 id=memory>Device memory</h2><table><tr><th>Rank<th>Step<th>Reserved peak"
                      "<th>Reserved growth<th>Allocated peak<th>Source</tr>",
                      rows, "</table>");
}

std::string StepTimelineSection(const v1::GetStepReportResponse& reports,
                                const std::map<uint64_t, std::string>& labels) {
  // Rank by rank in the order the reports come (each process's steps in order).
  std::vector<uint64_t> order;
  std::map<uint64_t, std::vector<const v1::StepReport*>> by_process;
  for (const v1::StepReport& r : reports.reports()) {
    auto& list = by_process[r.step().process_id()];
    if (list.empty()) order.push_back(r.step().process_id());
    list.push_back(&r);
  }
  if (order.empty()) return "";
  std::string h = "<h2 id=timeline>Step timeline</h2><p>Each step as wide as its wall time, split "
                  "into where the time went; steps that are not steady are faded.</p><div class=timeline>";
  for (uint64_t p : order) {
    absl::StrAppend(&h, "<div class=lane><span class=lane-label>rank ", Escape(Label(labels, p)),
                    "</span><div class=steps>");
    for (const v1::StepReport* r : by_process[p]) {
      const v1::StepBreakdown& b = r->breakdown();
      absl::StrAppend(&h, "<a class=\"tl-step", r->steady_state() ? "" : " unsteady", "\" href=\"#s", p, "-",
                      r->step().number(), "\" data-step=\"", r->step().number(), "\" style=\"flex-grow:",
                      absl::StrFormat("%.3f", static_cast<double>(b.wall_ns()) / 1e6), "\" title=\"step ",
                      r->step().number(), ": ", Ms(b.wall_ns()), " ms, ", Escape(analysis::DetectorName(r->primary_bottleneck())), " (",
                      analysis::StepKindLabel(r->kind()), ")\">", PartsBar(b.parts(), b.wall_ns()), "</a>");
    }
    absl::StrAppend(&h, "</div></div>");
  }
  absl::StrAppend(&h, "</div>");
  return h;
}

}  // namespace gpuspy::exporters::html
