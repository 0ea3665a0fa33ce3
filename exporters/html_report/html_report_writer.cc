#include "exporters/html_report/html_report_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/detector_names.h"
#include "analysis/replay/what_if_text.h"
#include "analysis/step_kind.h"
#include "analysis/step_source.h"
#include "analysis/text_form.h"
#include "exporters/html_report/html_sections.h"
#include "exporters/html_report/html_text.h"

namespace gpuspy::exporters {

using analysis::DetectorName;
using analysis::SeverityName;

namespace {

using html::Escape;
using html::Label;
using html::Ms;
using html::Pct;

constexpr char kStyle[] = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#222}
h2{margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:1em 0}td,th{padding:3px 8px;border-bottom:1px solid #ddd}
th{text-align:left;background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:flex;width:360px;height:12px;background:#eee}.bar span{display:block;height:12px}
.bar.wide{width:100%;height:18px}.bar.wide span{height:18px}
.finding{margin:.5em 0 .8em 1em;padding-left:.6em;border-left:3px solid #ddd}
.sev-critical{border-color:#b00}.sev-warning{border-color:#a60}.sev-critical b,.sev-critical .sev{color:#b00}
.finding .gain{font-weight:600}.finding .fix{margin-top:.2em}
code{background:#f4f4f4;padding:0 3px}td code{overflow-wrap:anywhere}section.step-findings{margin:.8em 0}
.legend span{margin-right:1em;white-space:nowrap}.legend i,i.sw{display:inline-block;width:10px;height:10px;margin-right:4px}
.timeline .lane{display:flex;align-items:center;margin:4px 0}.lane-label{width:6em;flex:none}
.timeline .steps{display:flex;flex:1;gap:2px;min-width:0}.tl-step{flex-basis:0;min-width:2px;display:block}
.tl-step .bar{width:100%;height:18px}.tl-step .bar span{height:18px}.tl-step.unsteady{opacity:.45}
td.comm{font-weight:600}
)css";

std::string SignedMs(int64_t ns) { return absl::StrFormat("%+.2f", static_cast<double>(ns) / 1e6); }

// The two ranks compared: headline, the parts of the step on both, the changes that add up.
// Headed by the ranks' numbers (JobSummary.compare_ranks): the diff's labels are selectors
// ("job@0"), which read as two runs, not two ranks of one.
std::string RankDiffSection(const v1::RunDiff& d, const v1::RankPair& ranks) {
  std::string h = absl::StrCat("<h2 id=ranks-compared>Ranks compared: rank ", ranks.a(), " vs rank ",
                               ranks.b(), "</h2><p>Median step ",
                               Ms(d.a().median_ns()), " vs ", Ms(d.b().median_ns()), " ms (",
                               SignedMs(d.median_delta_ns()), " ms",
                               d.within_noise() ? ", within the noise" : "", ").</p>");
  absl::StrAppend(&h, "<table><tr><th>Part (mean ms per step)<th>A<th>B<th>Change</tr>");
  for (const v1::PartChange& p : d.parts()) {
    if (p.a_ns() == 0 && p.b_ns() == 0) continue;
    absl::StrAppend(&h, "<tr><td>", Escape(p.part()), "<td class=n>", Ms(p.a_ns()),
                    "<td class=n>", Ms(p.b_ns()), "<td class=n>", SignedMs(p.delta_ns()), "</tr>");
  }
  absl::StrAppend(&h, "</table><p>What changed (adds up to the mean change, ",
                  SignedMs(d.mean_delta_ns()), " ms):</p><ol>");
  for (const v1::Contribution& c : d.contributions()) {
    absl::StrAppend(&h, "<li><b>", SignedMs(c.delta_ns()), " ms</b> ", Escape(c.kind()), " ",
                    c.kind() == "other" ? "" : Escape(c.subject()), "<br>", Escape(c.detail()),
                    "</li>");
  }
  absl::StrAppend(&h, "</ol>");
  return h;
}

}  // namespace

std::string ReportHtml(const v1::JobSummary& s, const v1::GetStepReportResponse& reports,
                       const std::map<uint64_t, std::string>& labels, const v1::RunDiff* rank_diff) {
  std::string h = absl::StrCat("<!doctype html><html><head><meta charset=utf-8><title>gpuspy report: ",
                               Escape(s.job_id()), "</title><style>", kStyle,
                               "</style></head><body><h1>gpuspy report: ", Escape(s.job_id()),
                               "</h1>");
  if (s.figures_per_window()) {
    // No step to time (analysis/step_source.h): say so, and what the figures are.
    absl::StrAppend(&h, "<p>", analysis::CountOf(s.process_count(), "process", "processes"), ", <b>no steps found</b>: ", s.window_count(),
                    " time windows (no NVTX range matched the step pattern and no repeating kernel "
                    "sequence was found), ", s.event_count(), " events. Figures are per window: GPU busy ",
                    absl::StrFormat("%.0f%%", s.median_gpu_busy_fraction() * 100), " (median window)</p>");
  } else {
    absl::StrAppend(&h, "<p>", analysis::CountOf(s.process_count(), "process", "processes"), ", ", s.step_count(), " steps (",
                    s.steady_step_count(), " steady), ", s.event_count(), " events; median step ",
                    Ms(s.median_step_wall_ns()), " ms, GPU busy ",
                    absl::StrFormat("%.0f%%", s.median_gpu_busy_fraction() * 100), "</p>");
  }
  const char* unit = s.figures_per_window() ? "window" : "step";
  if (s.has_largest_gain()) {
    absl::StrAppend(&h, "<p id=largest-gain data-detector=\"", Escape(DetectorName(s.largest_gain().detector())),
                    "\" data-lost-per-step-ns=\"", s.largest_gain().lost_per_step_ns(),
                    "\"><b>Largest expected gain:</b> ", Escape(DetectorName(s.largest_gain().detector())), ", ~",
                    Ms(s.largest_gain().lost_per_step_ns()), " ms per steady ", unit, " (found in ",
                    s.largest_gain().steps(), " of them). ", Escape(s.largest_gain().fix_hint()), "</p>");
  }
  if (!s.findings().empty()) {
    absl::StrAppend(&h, "<h2>Findings over the ", s.findings(0).steady_only() ? "steady " : "", unit,
                    "s</h2><table id=job-findings><tr><th>Finding<th>Severity<th>",
                    s.figures_per_window() ? "Windows" : "Steps", "<th>Lost ms per ", unit,
                    "<th>Fix</tr>");
    for (const v1::JobFinding& f : s.findings()) {
      absl::StrAppend(&h, "<tr data-detector=\"", Escape(DetectorName(f.detector())), "\" data-lost-per-step-ns=\"",
                      f.lost_per_step_ns(), "\"><td>", Escape(DetectorName(f.detector())), "<td>", Escape(SeverityName(f.severity())),
                      "<td class=n>", f.steps(), "/", f.of_steps(), "<td class=n>",
                      Ms(f.lost_per_step_ns()), "<td>", Escape(f.fix_hint()), "</tr>");
    }
    absl::StrAppend(&h, "</table>");
  }
  if (!s.bottlenecks().empty()) {
    absl::StrAppend(&h, "<table><tr><th>Primary bottleneck<th>", s.figures_per_window() ? "Windows" : "Steps",
                    "<th>Median lost ms</tr>");
    for (const auto& b : s.bottlenecks()) {
      absl::StrAppend(&h, "<tr><td>", Escape(DetectorName(b.detector())), "<td class=n>", b.steps(),
                      "<td class=n>", Ms(b.median_lost_ns()), "</tr>");
    }
    absl::StrAppend(&h, "</table>");
  }
  absl::StrAppend(&h, html::RanksSection(s));
  if (rank_diff != nullptr) absl::StrAppend(&h, RankDiffSection(*rank_diff, s.compare_ranks()));
  absl::StrAppend(&h, html::GpuTimeSection(s), html::TopKernelsSection(s));
  absl::StrAppend(&h,
                  "<h2>Steps</h2><table><tr><th>Rank<th>Step<th>Wall ms<th>GPU busy<th>Kernels"
                  "<th>Breakdown<th>Primary bottleneck<th>Lost ms<th>Kind</tr>");
  for (const v1::StepReport& r : reports.reports()) {
    const auto& b = r.breakdown();
    absl::StrAppend(&h, "<tr class=step data-process=\"", r.step().process_id(), "\" data-step=\"",
                    r.step().number(), "\" data-kind=\"", v1::StepKind_Name(r.kind()), "\" data-primary=\"",
                    Escape(DetectorName(r.primary_bottleneck())), "\" data-lost-ns=\"",
                    r.findings().empty() ? 0 : r.findings(0).lost_ns(), "\"><td class=n>",
                    Escape(Label(labels, r.step().process_id())),
                    "<td class=n><a href=\"#s", r.step().process_id(), "-", r.step().number(),
                    "\">", analysis::IsTimeWindow(r.step()) ? "window " : "", r.step().number(),
                    "</a><td class=n>", Ms(b.wall_ns()), "<td class=n>",
                    Pct(b.gpu_busy_ns(), b.wall_ns()), "<td class=n>", b.kernel_count(), "<td>",
                    html::PartsBar(b.parts(), b.wall_ns()), "<td>", Escape(DetectorName(r.primary_bottleneck())), "<td class=n>",
                    Ms(r.findings().empty() ? 0 : r.findings(0).lost_ns()), "<td>",
                    analysis::StepKindLabel(r.kind()), "</tr>");
  }
  absl::StrAppend(&h, "</table>", html::CausesLegend(), html::StepTimelineSection(reports, labels),
                  html::FloorSection(s, reports, labels), html::MemorySection(reports, labels),
                  "<h2>Findings</h2>");
  // Open, not folded away: the page is read (and printed) by someone without the viewer.
  for (const v1::StepReport& r : reports.reports()) {
    if (r.findings().empty()) continue;
    absl::StrAppend(&h, "<section class=step-findings id=\"s", r.step().process_id(), "-", r.step().number(),
                    "\"><h3>rank ", Escape(Label(labels, r.step().process_id())), " ",
                    std::string(analysis::StepNoun(r.step().source())), " ",
                    r.step().number(), ": ", Escape(DetectorName(r.primary_bottleneck())), "</h3>");
    if (!r.capture_note().empty()) absl::StrAppend(&h, "<p>! ", Escape(r.capture_note()), "</p>");
    if (const std::string replay = analysis::replay::ReplayLine(r.replay()); !replay.empty()) {
      absl::StrAppend(&h, "<p class=replay data-all-fixes-ns=\"", r.replay().all_fixes_ns(), "\">",
                      Escape(replay), "</p>");
    }
    for (const v1::Finding& f : r.findings()) {
      absl::StrAppend(&h, "<div class=\"finding sev-", Escape(SeverityName(f.severity())), "\" data-detector=\"",
                      Escape(DetectorName(f.detector())), "\" data-lost-ns=\"", f.lost_ns(), "\"><b>",
                      Escape(DetectorName(f.detector())), "</b> <span class=sev>[", Escape(SeverityName(f.severity())), "]</span>: ",
                      Escape(f.title()), "<br><span class=gain>~", Ms(f.lost_ns()), " ms lost</span>");
      if (f.has_what_if()) {
        absl::StrAppend(&h, "<br><span class=what-if data-gain-ns=\"", f.what_if().gain_ns(), "\">what if: ",
                        Escape(analysis::replay::WhatIfLine(f.what_if())), "</span>");
      }
      for (const v1::WhatIf& p : f.partial_fixes()) {
        absl::StrAppend(&h, "<br>partly: ", Escape(analysis::replay::WhatIfLine(p)));
      }
      for (const v1::Evidence& e : f.evidence()) {
        absl::StrAppend(&h, "<br><code>", Escape(e.key()), "</code> ", Escape(e.value()));
      }
      if (!f.fix_hint().empty()) absl::StrAppend(&h, "<div class=fix><b>fix:</b> ", Escape(f.fix_hint()), "</div>");
      absl::StrAppend(&h, "</div>");
    }
    absl::StrAppend(&h, "</section>");
  }
  absl::StrAppend(&h, "</body></html>\n");
  return h;
}

absl::Status WriteReportHtml(const std::string& path, const v1::JobSummary& summary,
                             const v1::GetStepReportResponse& reports,
                             const std::map<uint64_t, std::string>& labels,
                             const v1::RunDiff* rank_diff) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return absl::UnavailableError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(errno != 0 ? errno : EIO)));
  }
  out << ReportHtml(summary, reports, labels, rank_diff);
  out.close();
  if (!out) {
    return absl::UnavailableError(
        absl::StrCat("writing ", path, " failed: ", std::strerror(errno != 0 ? errno : EIO)));
  }
  return absl::OkStatus();
}

}  // namespace gpuspy::exporters
