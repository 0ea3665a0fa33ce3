#include "viewer/cli/analyze_command.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"
#include "codec/expanded_events.h"
#include "collector/analysis/job_analysis.h"
#include "collector/analysis/process_analysis.h"
#include "exporters/chrome_trace/chrome_trace_writer.h"
#include "exporters/html_report/html_report_writer.h"
#include "importers/kineto/kineto_reader.h"
#include "viewer/cli/report_view.h"

namespace gpuspy::cli {
namespace {

// Progress lines on a terminal only past this much input: small jobs finish before one is read.
constexpr uint64_t kProgressBytes = 256ull << 20;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double MBps(uint64_t bytes, int64_t ns) {
  return ns > 0 ? static_cast<double>(bytes) / 1e6 / (static_cast<double>(ns) / 1e9) : 0;
}

// "rank0.pt.trace.json.gz" -> "rank0" (what `gpuspy import` names the job).
std::string JobFromFile(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  return name.substr(0, name.find('.'));
}

struct FileResult {
  absl::Status status;
  std::optional<importers::KinetoTrace> trace;
  importers::KinetoReadTimings timings;
  std::vector<analysis::StepAnalysis> steps;
  int64_t analyse_ns = 0;
};

std::string ToJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(m, &json, options);
  while (!json.empty() && json.back() == '\n') json.pop_back();
  return json;
}

}  // namespace

int Analyze(const GlobalOptions& g, const AnalyzeOptions& o) {
  if (!o.export_to.empty() && (o.export_to.size() != 2 || o.export_to[0] != "perfetto")) {
    std::fprintf(stderr, "gpuspy analyze: --export takes a format and a file: --export perfetto out.json\n");
    return 2;
  }
  const std::string job = o.job.empty() ? JobFromFile(o.files.front()) : o.job;
  const size_t n = o.files.size();
  std::vector<FileResult> results(n);
  uint64_t total_bytes = 0;
  for (const std::string& f : o.files) {
    std::error_code ec;
    total_bytes += std::filesystem::file_size(f, ec);
  }
  const bool progress = total_bytes >= kProgressBytes && isatty(STDERR_FILENO) && !g.json;
  std::atomic<size_t> next{0}, done{0};
  // Each file is read and analysed on its own: ranks share nothing until the job-level step.
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      FileResult& r = results[i];
      absl::StatusOr<importers::KinetoTrace> t = importers::ReadKinetoTrace(o.files[i], &r.timings);
      if (!t.ok()) {
        r.status = t.status();
      } else {
        r.trace = std::move(*t);
        const int64_t start = NowNs();
        // The process id the collector would give: position among the files, from 1.
        r.steps = analysis::AnalyzeProcessSteps(analysis::CutIntoImportBatches(r.trace->events),
                                                r.trace->strings, i + 1);
        r.analyse_ns = NowNs() - start;
      }
      const size_t d = ++done;
      if (progress) std::fprintf(stderr, "\rgpuspy analyze: %zu/%zu files", d, n);
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::min<size_t>(n, o.threads > 0 ? o.threads : cores);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (progress) std::fprintf(stderr, "\n");

  bool failed = false;
  for (size_t i = 0; i < n; ++i) {
    if (results[i].status.ok()) continue;
    failed = true;
    std::fprintf(stderr, "gpuspy analyze: %s\n", std::string(results[i].status.message()).c_str());
  }
  if (failed && !o.keep_going) return 1;

  std::vector<analysis::JobProcess> processes;
  std::map<uint64_t, std::vector<analysis::StepAnalysis>> steps;
  std::map<uint64_t, std::string> labels;
  for (size_t i = 0; i < n; ++i) {
    FileResult& r = results[i];
    if (!r.trace) continue;
    const uint64_t process_id = i + 1;
    v1::ProcessIdentity& id = r.trace->identity;
    // As `gpuspy import`: a trace without distributedInfo is the rank of its position.
    if (id.rank() < 0) id.set_rank(static_cast<int32_t>(i));
    id.set_job_id(job);
    id.set_host("import");
    id.set_source("import");
    processes.push_back({process_id, id.rank(), id.world_size(), id.clock_offset_ns(), id.host(),
                         r.trace->events.size()});
    steps[process_id] = std::move(r.steps);
    labels[process_id] = std::to_string(id.rank());
  }
  if (processes.empty()) return 1;
  const int64_t job_start = NowNs();
  analysis::AnalyzeJobSteps(processes, &steps);
  v1::GetStepReportResponse reports;
  for (auto& [process_id, list] : steps) {
    for (analysis::StepAnalysis& a : list) *reports.add_reports() = std::move(a.report);
  }
  v1::GetJobSummaryResponse summary;
  *summary.mutable_summary() = analysis::SummarizeAnalyzedJob(
      job, std::vector<v1::StepReport>(reports.reports().begin(), reports.reports().end()),
      processes);
  const int64_t job_ns = NowNs() - job_start;

  if (o.timings) {
    for (size_t i = 0; i < n; ++i) {
      const FileResult& r = results[i];
      if (!r.trace) continue;
      const importers::KinetoReadTimings& t = r.timings;
      std::fprintf(stderr,
                   "%s: %.1f MB on disk, %.1f MB JSON; MB/s of JSON: inflate %.0f, index %.0f, "
                   "walk+map %.0f, order %.0f, parse+normalise %.0f, analyse %.0f\n",
                   o.files[i].c_str(), t.file_bytes / 1e6, t.json_bytes / 1e6,
                   MBps(t.json_bytes, t.inflate_ns), MBps(t.json_bytes, t.index_ns),
                   MBps(t.json_bytes, t.walk_ns), MBps(t.json_bytes, t.finish_ns),
                   MBps(t.json_bytes, t.index_ns + t.walk_ns + t.finish_ns),
                   MBps(t.json_bytes, r.analyse_ns));
    }
    std::fprintf(stderr, "job-level analysis: %.1f ms\n", job_ns / 1e6);
  }

  if (!o.export_to.empty()) {
    std::vector<exporters::ExportedProcess> out;
    for (size_t i = 0; i < n; ++i) {
      if (!results[i].trace) continue;
      exporters::ExportedProcess p;
      p.process_id = i + 1;
      p.identity = results[i].trace->identity;
      ToExpandedEvents(results[i].trace->events, results[i].trace->strings, &p.events);
      out.push_back(std::move(p));
    }
    if (absl::Status st = exporters::WriteChromeTrace(o.export_to[1], out); !st.ok()) {
      std::fprintf(stderr, "gpuspy analyze: %s\n", std::string(st.message()).c_str());
      return 1;
    }
  }
  if (!o.html.empty()) {
    if (absl::Status st = exporters::WriteReportHtml(o.html, summary.summary(), reports, labels);
        !st.ok()) {
      std::fprintf(stderr, "gpuspy analyze: %s\n", std::string(st.message()).c_str());
      return 1;
    }
  }
  if (g.json) {
    // The two answers the collector gives for the job: `gpuspy report --all` and `gpuspy summary`.
    std::cout << "{\"job\": \"" << job << "\",\n\"reports\": " << ToJson(reports)
              << ",\n\"summary\": " << ToJson(summary) << "}\n";
  } else if (reports.reports().empty()) {
    std::cout << "no steps found in job '" << job << "'\n";
  } else {
    PrintSummary(summary.summary());
    std::cout << "\n";
    PrintStepReports(labels, reports);
  }
  return failed ? 1 : 0;
}

}  // namespace gpuspy::cli
