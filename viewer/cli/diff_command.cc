#include "viewer/cli/diff_command.h"

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "analysis/diff/run_diff.h"
#include "analysis/diff/run_profile.h"
#include "viewer/cli/command_registry.h"
#include "viewer/cli/diff_view.h"
#include "viewer/cli/job_name_for_files.h"
#include "viewer/cli/json_output.h"
#include "viewer/cli/offline_job.h"
#include "viewer/cli/query_client.h"
#include "viewer/cli/run_spec.h"

namespace gpuspy::cli {
namespace {

// The profile of a path spec's steps, from trace files analysed here.
absl::StatusOr<v1::RunProfile> OfflineProfile(const OfflineJob& job, const RunSpec& spec) {
  const analysis::RunSelector& sel = spec.selector;
  std::vector<analysis::SelectedStep> selected;
  std::set<int32_t> present;
  for (const analysis::JobProcess& p : job.processes) {
    present.insert(p.rank);
    if (sel.rank && p.rank != *sel.rank) continue;
    const OfflineFile& file = job.files[p.process_id - 1];
    for (const analysis::StepAnalysis& s : job.steps.at(p.process_id)) {
      if (!sel.steps.Contains(s.report.step().number())) continue;
      selected.push_back({&s, &file.trace->events, &file.trace->strings, p.rank});
    }
  }
  if (sel.rank && !present.contains(*sel.rank)) {
    return absl::NotFoundError(absl::StrCat(spec.text, ": no rank ", *sel.rank, " in these files"));
  }
  if (selected.empty()) return absl::NotFoundError(absl::StrCat(spec.text, ": no steps found"));
  return analysis::ProfileSelection(analysis::SelectorLabel(sel), selected);
}

v1::GetRunProfileRequest ProfileRequest(const RunSpec& spec) {
  const analysis::RunSelector& sel = spec.selector;
  v1::GetRunProfileRequest req;
  req.set_job_id(sel.base);
  if (sel.rank) req.set_rank(*sel.rank);
  if (sel.steps.first) req.set_first_step(*sel.steps.first);
  if (sel.steps.last) req.set_last_step(*sel.steps.last);
  return req;
}

absl::StatusOr<v1::RunProfile> CollectorProfile(const GlobalOptions& g, const RunSpec& spec) {
  const v1::GetRunProfileRequest req = ProfileRequest(spec);
  QueryClient q(g.collector, std::max(g.timeout_s, 120.0));
  v1::GetRunProfileResponse resp;
  // QueryClient has printed the reason.
  if (!q.Call(&v1::Query::Stub::GetRunProfile, req, &resp)) return absl::UnavailableError("");
  return resp.profile();
}

int Show(const GlobalOptions& g, const v1::RunDiff& diff) {
  if (g.json) {
    PrintJson(g, diff);
  } else {
    PrintDiff(diff, std::cout);
  }
  return 0;
}

}  // namespace

int Diff(const GlobalOptions& g, const DiffOptions& o) {
  std::vector<RunSpec> specs;
  for (const std::string& text : {o.a, o.b}) {
    absl::StatusOr<RunSpec> s = ParseRunSpec(text);
    if (!s.ok()) {
      std::fprintf(stderr, "gpuspy diff: %s\n", std::string(s.status().message()).c_str());
      return 2;
    }
    specs.push_back(*std::move(s));
  }
  // Both sides stored in the collector: it compares them (Query.DiffRuns), as for /api/diff.
  if (!specs[0].is_path && !specs[1].is_path) {
    v1::DiffRunsRequest req;
    *req.mutable_a() = ProfileRequest(specs[0]);
    *req.mutable_b() = ProfileRequest(specs[1]);
    QueryClient q(g.collector, std::max(g.timeout_s, 120.0));
    v1::DiffRunsResponse resp;
    if (!q.Call(&v1::Query::Stub::DiffRuns, req, &resp)) return 1;  // QueryClient said why
    return Show(g, resp.diff());
  }
  // A side read from trace files is profiled here, then compared by the same analysis function.
  // Trace files are read once even when both sides are ranks of the same files.
  std::map<std::string, std::unique_ptr<OfflineJob>> loaded;
  std::vector<v1::RunProfile> profiles;
  for (const RunSpec& spec : specs) {
    absl::StatusOr<v1::RunProfile> profile;
    if (spec.is_path) {
      std::unique_ptr<OfflineJob>& job = loaded[spec.selector.base];
      if (job == nullptr) {
        absl::StatusOr<std::vector<std::string>> files = TraceFilesOf(spec);
        if (!files.ok()) {
          std::fprintf(stderr, "gpuspy diff: %s\n", std::string(files.status().message()).c_str());
          return 1;
        }
        job = std::make_unique<OfflineJob>(
            LoadOfflineJob(*files, JobNameForFiles({spec.selector.base}), o.threads, /*progress=*/false));
        for (const OfflineFile& f : job->files) {
          if (!f.status.ok()) {
            std::fprintf(stderr, "gpuspy diff: %s\n", std::string(f.status.message()).c_str());
            return 1;
          }
        }
      }
      profile = OfflineProfile(*job, spec);
    } else {
      profile = CollectorProfile(g, spec);
    }
    if (!profile.ok()) {
      if (!profile.status().message().empty()) {
        std::fprintf(stderr, "gpuspy diff: %s\n", std::string(profile.status().message()).c_str());
      }
      return 1;
    }
    profiles.push_back(*std::move(profile));
  }
  if (absl::Status st = analysis::CheckComparable(profiles[0], profiles[1]); !st.ok()) {
    std::fprintf(stderr, "gpuspy diff: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  return Show(g, analysis::DiffRuns(profiles[0], profiles[1]));
}

RegisteredCommand RegisterDiffCommand(CLI::App& app, const GlobalOptions& g) {
  auto df = std::make_shared<DiffOptions>();
  auto* diff = app.add_subcommand(
      "diff", "Why B is slower (or faster) than A: step time, where it goes, and the changes that "
              "add up to the difference");
  diff->add_option("a", df->a, "Run A: trace file(s) (a file or a directory) or a job id, "
                               "optionally @RANK and :STEPS (N, A-B, A-, -B)")->required();
  diff->add_option("b", df->b, "Run B, as A")->required();
  diff->add_option("--threads", df->threads, "Trace files read at once (default: one per core)");
  diff->footer("Examples: gpuspy diff last_week/ today/    gpuspy diff bert@0 bert@7\n"
               "          gpuspy diff bert:100-200 bert:900-1000    gpuspy diff base.json.gz pr.json.gz");
  return {diff, [&g, df] { return Diff(g, *df); }};
}

}  // namespace gpuspy::cli
