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
#include "viewer/palette/time_causes.h"

namespace gpuspy::exporters {

using analysis::DetectorName;
using analysis::SeverityName;

namespace {

std::string Escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Ms(int64_t ns) { return absl::StrFormat("%.2f", static_cast<double>(ns) / 1e6); }

std::string Pct(int64_t part, int64_t whole) {
  return whole > 0 ? absl::StrFormat("%.0f%%", 100.0 * static_cast<double>(part) / whole) : "-";
}

std::string Label(const std::map<uint64_t, std::string>& labels, uint64_t id) {
  auto it = labels.find(id);
  return it == labels.end() ? absl::StrCat("p", id) : it->second;
}

// One stacked bar: where the step's wall time went (StepBreakdown.parts, in the viewer's palette).
// Each part carries its cause and ns, so a script reads the same numbers the bar draws.
std::string BreakdownBar(const v1::StepBreakdown& b) {
  std::string out = "<div class=bar>";
  for (const v1::TimePart& p : b.parts()) {
    if (p.ns() <= 0 || b.wall_ns() <= 0) continue;
    const palette::TimeCauseStyle& style = palette::StyleOf(p.cause());
    absl::StrAppend(&out, "<span data-cause=\"", v1::TimeCause_Name(p.cause()), "\" data-ns=\"", p.ns(),
                    "\" style=\"width:", absl::StrFormat("%.3f", 100.0 * static_cast<double>(p.ns()) / b.wall_ns()),
                    "%;background:", style.color, "\" title=\"", style.label, " ", Ms(p.ns()), " ms\"></span>");
  }
  absl::StrAppend(&out, "</div>");
  return out;
}

// The bar's legend, from the same palette.
std::string Legend() {
  std::string out = "<p class=legend>";
  for (const palette::TimeCauseStyle& style : palette::TimeCauseStyles()) {
    absl::StrAppend(&out, "<span><i style=\"background:", style.color, "\"></i>", style.label, "</span> ");
  }
  absl::StrAppend(&out, "</p>");
  return out;
}

constexpr char kStyle[] = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{padding:3px 8px;border-bottom:1px solid #ddd}
th{text-align:left;background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:flex;width:360px;height:12px;background:#eee}.bar span{display:block;height:12px}
.finding{margin:.3em 0 .3em 1em}.sev-critical{color:#b00}.sev-warning{color:#a60}
code{background:#f4f4f4;padding:0 3px}details{margin:.5em 0}
.legend span{margin-right:1em;white-space:nowrap}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
)css";

std::string SignedMs(int64_t ns) { return absl::StrFormat("%+.2f", static_cast<double>(ns) / 1e6); }

// The two ranks compared: headline, the parts of the step on both, the changes that add up.
std::string RankDiffSection(const v1::RunDiff& d) {
  std::string h = absl::StrCat("<h2 id=ranks-compared>Ranks compared: ", Escape(d.a_label()),
                               " vs ", Escape(d.b_label()), "</h2><p>Median step ",
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
  std::string h = absl::StrCat("<!doctype html><html><head><meta charset=utf-8><title>gpuspy: ",
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
  if (rank_diff != nullptr) absl::StrAppend(&h, RankDiffSection(*rank_diff));
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
                    BreakdownBar(b), "<td>", Escape(DetectorName(r.primary_bottleneck())), "<td class=n>",
                    Ms(r.findings().empty() ? 0 : r.findings(0).lost_ns()), "<td>",
                    analysis::StepKindLabel(r.kind()), "</tr>");
  }
  absl::StrAppend(&h, "</table>", Legend(), "<h2>Findings</h2>");
  for (const v1::StepReport& r : reports.reports()) {
    if (r.findings().empty()) continue;
    absl::StrAppend(&h, "<details id=\"s", r.step().process_id(), "-", r.step().number(),
                    "\"><summary>rank ", Escape(Label(labels, r.step().process_id())), " ",
                    std::string(analysis::StepNoun(r.step().source())), " ",
                    r.step().number(), ": ", Escape(DetectorName(r.primary_bottleneck())), "</summary>");
    if (!r.capture_note().empty()) absl::StrAppend(&h, "<p>! ", Escape(r.capture_note()), "</p>");
    if (const std::string replay = analysis::replay::ReplayLine(r.replay()); !replay.empty()) {
      absl::StrAppend(&h, "<p class=replay data-all-fixes-ns=\"", r.replay().all_fixes_ns(), "\">",
                      Escape(replay), "</p>");
    }
    for (const v1::Finding& f : r.findings()) {
      absl::StrAppend(&h, "<div class=\"finding sev-", Escape(SeverityName(f.severity())), "\"><b>",
                      Escape(DetectorName(f.detector())), "</b>: ", Escape(f.title()), " (", Ms(f.lost_ns()),
                      " ms)");
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
      if (!f.fix_hint().empty()) absl::StrAppend(&h, "<br>fix: ", Escape(f.fix_hint()));
      absl::StrAppend(&h, "</div>");
    }
    absl::StrAppend(&h, "</details>");
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
