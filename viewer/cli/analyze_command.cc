#include "viewer/cli/analyze_command.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <google/protobuf/util/json_util.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "analysis/diff/run_diff.h"
#include "analysis/diff/run_profile.h"
#include "analysis/job_analysis.h"
#include "analysis/text_form.h"
#include "codec/expanded_events.h"
#include "exporters/chrome_trace/chrome_trace_writer.h"
#include "exporters/html_report/html_report_writer.h"
#include "importers/kineto/skip_reasons.h"
#include "model/units.h"
#include "viewer/cli/command_registry.h"
#include "viewer/cli/csv_view.h"
#include "viewer/cli/json_output.h"
#include "viewer/cli/job_name_for_files.h"
#include "viewer/cli/offline_job.h"
#include "viewer/cli/progress_line.h"
#include "viewer/cli/report_view.h"

namespace gpuspy::cli {
namespace {

uint64_t FileBytes(const std::string& path) {
  std::error_code ec;
  const uint64_t bytes = std::filesystem::file_size(path, ec);
  return ec ? 0 : bytes;
}

double MBps(uint64_t bytes, int64_t ns) {
  return ns > 0 ? static_cast<double>(bytes) / 1e6 / (static_cast<double>(ns) / 1e9) : 0;
}

// rank `pair.a` against rank `pair.b` of the job, as `gpuspy diff DIR@a DIR@b` would.
v1::RunDiff RankDiff(const OfflineJob& job, const v1::RankPair& pair) {
  auto profile = [&](int32_t rank) {
    std::vector<analysis::SelectedStep> steps;
    for (const analysis::JobProcess& p : job.processes) {
      if (p.rank != rank) continue;
      const OfflineFile& file = job.files[p.process_id - 1];
      for (const analysis::StepAnalysis& s : job.steps.at(p.process_id)) {
        steps.push_back({&s, &file.trace->events, &file.trace->strings, rank});
      }
    }
    return analysis::ProfileSelection(absl::StrCat(job.job, "@", rank), steps);
  };
  return analysis::DiffRuns(profile(pair.a()), profile(pair.b()));
}

}  // namespace

int Analyze(const GlobalOptions& g, const AnalyzeOptions& o) {
  if (!o.export_to.empty() && (o.export_to.size() != 2 || o.export_to[0] != "perfetto")) {
    std::fprintf(stderr, "gpuspy analyze: --export takes a format and a file: --export perfetto out.json\n");
    return 2;
  }
  const std::string pattern = o.step_pattern.empty() ? analysis::kDefaultStepPattern : o.step_pattern;
  if (absl::Status st = analysis::CheckStepPattern(pattern); !st.ok()) {
    std::fprintf(stderr, "gpuspy analyze: %s\n", std::string(st.message()).c_str());
    return 2;
  }
  const std::string job = o.job.empty() ? JobNameForFiles(o.files) : o.job;
  // Shown only past kProgressDelay: small files never see it.
  const bool progress = ProgressWanted(g);
  // Events are read again after the analysis only by the HTML report's rank comparison and the
  // export.
  const EventsAfterAnalysis events =
      o.html.empty() && o.export_to.empty() ? EventsAfterAnalysis::kDrop : EventsAfterAnalysis::kKeep;
  OfflineJob loaded = LoadOfflineJob(o.files, job, o.threads, progress, pattern,
                                     {.max_json_bytes = o.max_trace_bytes, .progress = {}}, events);
  const size_t n = loaded.files.size();
  std::vector<OfflineFile>& results = loaded.files;

  for (const OfflineFile& f : results) {
    if (!f.status.ok()) std::fprintf(stderr, "gpuspy analyze: %s\n", std::string(f.status.message()).c_str());
    if (f.trace && f.trace->stats.cut_strings > 0) {
      std::fprintf(stderr, "gpuspy analyze: %s\n", importers::CutStringsLine(f.path, f.trace->stats.cut_strings).c_str());
    }
  }
  const bool failed = loaded.any_failed();
  if (failed && !o.keep_going) return 1;
  if (loaded.processes.empty()) return 1;
  const std::vector<analysis::JobProcess>& processes = loaded.processes;
  const std::map<uint64_t, std::string>& labels = loaded.labels;
  const int64_t job_ns = loaded.job_ns;
  std::vector<v1::StepReport> all;
  for (const auto& [process_id, list] : loaded.steps) {
    for (const analysis::StepAnalysis& a : list) all.push_back(a.report);
  }
  v1::GetJobSummaryResponse summary;
  *summary.mutable_summary() = analysis::SummarizeAnalyzedJob(job, all, processes);
  // The HTML report compares the two ranks the summary picks (the viewer's compare page does too).
  std::optional<v1::RunDiff> rank_diff;
  if (!o.html.empty() && summary.summary().has_compare_ranks()) {
    rank_diff = RankDiff(loaded, summary.summary().compare_ranks());
  }
  v1::GetStepReportResponse reports;
  for (v1::StepReport& r : all) *reports.add_reports() = std::move(r);

  if (o.timings) {
    for (size_t i = 0; i < n; ++i) {
      const OfflineFile& r = results[i];
      if (!r.trace) continue;
      const importers::KinetoReadTimings& t = r.timings;
      std::fprintf(stderr,
                   "%s: %.1f MB on disk, %.1f MB JSON; MB/s of JSON: inflate %.0f, index %.0f, "
                   "walk+map %.0f, order %.0f, parse+normalise %.0f, analyse %.0f; JSON text held "
                   "at once %.1f MB, events %.1f MB\n",
                   o.files[i].c_str(), t.file_bytes / 1e6, t.json_bytes / 1e6,
                   MBps(t.json_bytes, t.inflate_ns), MBps(t.json_bytes, t.index_ns),
                   MBps(t.json_bytes, t.walk_ns), MBps(t.json_bytes, t.finish_ns),
                   MBps(t.json_bytes, t.index_ns + t.walk_ns + t.finish_ns),
                   MBps(t.json_bytes, r.analyse_ns), t.text_held_bytes / 1e6,
                   t.event_bytes / 1e6);
    }
    std::fprintf(stderr, "job-level analysis: %.1f ms\n", job_ns / 1e6);
  }

  if (!o.export_to.empty()) {
    // What gpuspyd's export holds too (chrome_trace_writer.h): each process's events, and its
    // steps with their findings on the "gpuspy steps" track.
    std::vector<exporters::ExportedProcess> out;
    size_t steps = 0, findings = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!results[i].trace) continue;
      exporters::ExportedProcess p;
      p.process_id = i + 1;
      p.identity = results[i].trace->identity;
      ToExpandedEvents(results[i].trace->events, results[i].trace->strings, &p.events);
      if (auto it = loaded.steps.find(p.process_id); it != loaded.steps.end()) {
        for (const analysis::StepAnalysis& a : it->second) {
          p.steps.push_back(a.report);
          findings += a.report.findings_size();
        }
        steps += it->second.size();
      }
      out.push_back(std::move(p));
    }
    exporters::ExportStats stats;
    if (absl::Status st = exporters::WriteChromeTrace(o.export_to[1], out, &stats); !st.ok()) {
      std::fprintf(stderr, "gpuspy analyze: %s\n", std::string(st.message()).c_str());
      return 1;
    }
    // On stderr: stdout is the report (or the JSON document).
    std::fprintf(stderr,
                 "gpuspy analyze: wrote %s (%s): %llu trace events from %s, %zu steps and "
                 "%zu findings on the \"gpuspy steps\" track; open it in https://ui.perfetto.dev\n",
                 o.export_to[1].c_str(), FormatBytes(FileBytes(o.export_to[1])).c_str(),
                 static_cast<unsigned long long>(stats.trace_events),
                 analysis::CountOf(out.size(), "process", "processes").c_str(), steps, findings);
    if (const std::string line = exporters::NotExportedLine(stats.not_exported); !line.empty()) {
      std::fprintf(stderr, "gpuspy analyze: %s\n", line.c_str());
    }
  }
  if (!o.html.empty()) {
    if (absl::Status st = exporters::WriteReportHtml(o.html, summary.summary(), reports, labels,
                                                     rank_diff ? &*rank_diff : nullptr);
        !st.ok()) {
      std::fprintf(stderr, "gpuspy analyze: %s\n", std::string(st.message()).c_str());
      return 1;
    }
    std::fprintf(stderr, "gpuspy analyze: wrote %s (%s): the report of %d step%s, self-contained\n",
                 o.html.c_str(), FormatBytes(FileBytes(o.html)).c_str(), reports.reports_size(),
                 reports.reports_size() == 1 ? "" : "s");
  }
  if (g.json) {
    // The two answers the collector gives for the job: `gpuspy report --all` and `gpuspy summary`.
    std::cout << "{\"job\": " << nlohmann::json(job).dump() << ",\n\"reports\": " << ToJson(reports, g.json_style)
              << ",\n\"summary\": " << ToJson(summary, g.json_style) << "}\n";
  } else if (g.csv) {
    PrintStepCsv(labels, reports, std::cout);
  } else if (reports.reports().empty()) {
    std::cout << "no steps found in job '" << job << "'\n";
  } else {
    PrintSummary(summary.summary());
    std::cout << "\n";
    PrintStepReports(labels, reports);
  }
  return failed ? 1 : 0;
}

void AddOfflineOptions(CLI::App* command, AnalyzeOptions* an) {
  command->add_flag("--keep-going", an->keep_going,
                    "Go on with the files that read when others do not (analyse or import them; "
                    "the skipped ones are named on stderr; still exits 1)");
  command->add_option("--export", an->export_to, "Also write the events: --export perfetto out.json[.gz]")
      ->expected(2);
  command->add_option("--html", an->html, "Also write a self-contained static report page");
  command->add_option("--threads", an->threads, "Threads (default: one per core): files read at once; with fewer files, a file's steps analysed at once");
  command->add_flag("--timings", an->timings, "Per-stage MB/s of each file on stderr");
  command->add_option("--max-trace-bytes", an->max_trace_bytes,
                      "Refuse a file whose JSON text (gzip inflated) is larger (default 2 GiB; "
                      "a gzip file is measured before it is inflated, so a bomb is refused "
                      "without holding its text)")
      ->check(CLI::Range(uint64_t{1}, importers::kMaxTraceBytes));
}

void AddStepPatternOption(CLI::App* command, std::string* step_pattern) {
  command->add_option("--step-pattern", *step_pattern,
                      "RE2 regex over NVTX range names that delimits steps (group 1 = the step number; "
                      "default: ProfilerStep#(\\d+))");
}

RegisteredCommand RegisterAnalyzeCommand(CLI::App& app, const GlobalOptions& g) {
  auto an = std::make_shared<AnalyzeOptions>();
  auto* analyze = app.add_subcommand(
      "analyze", "Analyse PyTorch profiler traces here, no gpuspyd: per-step reports, job summary, "
                 "cross-rank findings; several files = ranks of one job");
  analyze->add_option("files", an->files, "Trace files (*.pt.trace.json[.gz])")
      ->required()->check(CLI::ExistingFile);
  analyze->add_option("--job", an->job, "Job id (default: one file's name; for several, the name they share less the rank, "
                 "else their directory)");
  AddOfflineOptions(analyze, an.get());
  AddStepPatternOption(analyze, &an->step_pattern);
  analyze->footer("Example: gpuspy analyze run/rank*.pt.trace.json.gz --html report.html");
  return {analyze, [&g, an] { return Analyze(g, *an); }};
}

}  // namespace gpuspy::cli
