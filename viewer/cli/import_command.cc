#include "viewer/cli/import_command.h"

#include "importers/kineto/trace_rank.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "analysis/step_segmenter.h"
#include "analysis/text_form.h"
#include "client/transport/event_upload.h"
#include "importers/kineto/kineto_reader.h"
#include "importers/kineto/skip_reasons.h"
#include "viewer/cli/analyze_command.h"
#include "viewer/cli/batch_malloc.h"
#include "viewer/cli/command_registry.h"
#include "viewer/cli/file_sha256.h"
#include "viewer/cli/job_name_for_files.h"
#include "viewer/cli/json_output.h"
#include "viewer/cli/progress_line.h"
#include "viewer/cli/query_client.h"
#include "viewer/cli/table.h"

namespace gpuspy::cli {
namespace {

// --json's answer: a document of our own, not a protobuf Struct (Debian's libprotobuf is built
// without TSan, and a map field's layout differs under it: a Struct built in a TSan build crashes).
using Json = nlohmann::ordered_json;

constexpr size_t kEventsPerBatch = 4096;

struct ReadTrace {
  size_t index = 0;  // position on the command line: the rank of a trace that names none
  std::string path;
  std::string sha256;
  importers::KinetoTrace trace;
  importers::KinetoReadTimings read;  // bytes on disk and inflated
};

// Skipped reasons named in the text output per file (all of them are in --json).
constexpr size_t kTextSkipReasons = 3;

// Every file read, hashed and parsed before anything is sent: that is what makes an import all or
// nothing without a staging area in the store. Failures go to `failed`, one line each, naming
// the file (and the byte where the parser stopped).
std::vector<ReadTrace> ReadAll(const std::vector<std::string>& files, uint64_t max_trace_bytes,
                               ProgressLine* line, std::vector<std::string>* failed) {
  KeepFreedMemoryForReuse();
  std::vector<ReadTrace> out;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string what = absl::StrCat("importing ", std::filesystem::path(files[i]).filename().string());
    line->Show(what + ": hashing", /*phase=*/true);
    absl::StatusOr<std::string> sha = FileSha256Hex(files[i]);
    importers::KinetoReadTimings read;
    importers::KinetoReadLimits limits{.max_json_bytes = max_trace_bytes, .progress = {}};
    limits.progress = [&](uint64_t done, uint64_t total) {
      line->Show(ProgressText(what, done, total, ProgressUnit::kBytes));
    };
    absl::StatusOr<importers::KinetoTrace> trace =
        sha.ok() ? importers::ReadKinetoTrace(files[i], &read, limits) : absl::StatusOr<importers::KinetoTrace>(sha.status());
    if (!trace.ok()) {
      failed->push_back(std::string(trace.status().message()));
      continue;
    }
    out.push_back({i, files[i], *sha, std::move(*trace), read});
  }
  return out;
}

v1::ProcessIdentity IdentityOf(const ReadTrace& r, const std::string& job) {
  v1::ProcessIdentity id = r.trace.identity;
  std::error_code ec;
  const std::string abs = std::filesystem::absolute(r.path, ec).string();
  // Keyed by content, not path: the same bytes are the same process wherever they lie, and an
  // edited file at the same path is not appended to the old one's record.
  id.set_process_key(absl::StrCat("import:", r.sha256));
  id.set_content_sha256(r.sha256);
  id.set_job_id(job);
  id.set_host("import");
  id.set_source("import");
  id.add_command_line(abs);
  // Several files are several ranks of one job; a trace without distributedInfo gets the rank
  // its file name says, else its position on the command line.
  if (id.rank() < 0) id.set_rank(importers::ImpliedRank(r.path, r.index));
  return id;
}

// Deletes the processes `matches` name, job by job. `force`: they are this import's own, whose
// streams may not have been torn down yet.
bool DeleteProcesses(QueryClient& client, const std::vector<v1::ImportMatch>& matches, bool force) {
  std::map<std::string, v1::DeleteJobRequest> by_job;
  for (const v1::ImportMatch& m : matches) {
    v1::DeleteJobRequest& r = by_job[m.job_id()];
    r.set_job_id(m.job_id());
    r.set_force(force);
    r.add_process_ids(m.process_id());
  }
  for (const auto& [job, request] : by_job) {
    v1::DeleteJobResponse resp;
    if (!client.Call(&v1::Query::Stub::DeleteJob, request, &resp)) return false;
  }
  return true;
}

// After a failed send: removes what this import stored (found by the hashes it sent).
void RollBack(QueryClient& client, const std::vector<const ReadTrace*>& sent, const std::string& job) {
  v1::FindImportsRequest req;
  for (const ReadTrace* r : sent) req.add_content_sha256(r->sha256);
  v1::FindImportsResponse found;
  if (client.Call(&v1::Query::Stub::FindImports, req, &found) &&
      DeleteProcesses(client, {found.matches().begin(), found.matches().end()}, true)) {
    std::fprintf(stderr, "gpuspy import: rolled back: nothing of this import is stored\n");
    return;
  }
  std::fprintf(stderr, "gpuspy import: could not roll back: job '%s' may hold part of this import "
                       "(gpuspy jobs delete %s)\n", job.c_str(), job.c_str());
}

// What became of one file's events, for --json: read, skipped (why), stored, and where.
Json DescribeFile(const ReadTrace& r, const v1::ProcessIdentity& id, const UploadResult& up) {
  Json f = Json::object();
  uint64_t imported = 0, skipped = 0;
  for (const auto& [cat, n] : r.trace.stats.imported) imported += n;
  f["file"] = r.path;
  f["job"] = id.job_id();
  f["process_id"] = up.process_id;
  f["rank"] = id.rank();
  f["bytes_read"] = r.read.file_bytes;
  f["json_bytes"] = r.read.json_bytes;
  f["events_read"] = r.trace.stats.trace_events;
  f["events_imported"] = imported;
  Json reasons = Json::array();
  for (const importers::SkipReason& why : importers::SkipReasons(r.trace.stats.skipped)) {
    reasons.push_back({{"reason", why.phrase}, {"key", why.key}, {"events", why.events}});
    skipped += why.events;
  }
  f["skipped"] = std::move(reasons);
  f["events_skipped"] = skipped;
  f["cut_strings"] = r.trace.stats.cut_strings;
  // Stored = imported + one collective record per NCCL kernel whose args say what it moves.
  f["collective_records"] = r.trace.stats.collectives;
  Json left_out = Json::object();
  for (const auto& [what, n] : r.trace.stats.not_exported) left_out[what] = n;
  f["not_exported"] = std::move(left_out);  // by the gpuspy export that wrote the file
  f["events_stored"] = up.events;
  f["wire_bytes"] = up.wire_bytes;
  return f;
}

// "9195 flow arrows (...); 4405 ...": the reasons that skipped the most.
std::string TopSkipReasons(const ReadTrace& r) {
  std::string out;
  const std::vector<importers::SkipReason> reasons = importers::SkipReasons(r.trace.stats.skipped);
  for (size_t i = 0; i < reasons.size() && i < kTextSkipReasons; ++i) {
    absl::StrAppend(&out, out.empty() ? "" : "; ", reasons[i].events, " ", reasons[i].phrase);
  }
  if (reasons.size() > kTextSkipReasons) {
    absl::StrAppend(&out, "; ", reasons.size() - kTextSkipReasons, " more reasons (--json)");
  }
  return out;
}

}  // namespace

int Import(const GlobalOptions& g, const ImportOptions& o) {
  // A bad pattern is found before any file is read, let alone sent.
  if (!o.step_pattern.empty()) {
    if (absl::Status st = analysis::CheckStepPattern(o.step_pattern); !st.ok()) {
      std::fprintf(stderr, "gpuspy import: %s; nothing imported\n", std::string(st.message()).c_str());
      return 2;
    }
  }
  const std::string job = o.job.empty() ? JobNameForFiles(o.files) : o.job;
  std::vector<std::string> failed;
  ProgressLine line(ProgressWanted(g));
  std::vector<ReadTrace> traces = ReadAll(o.files, o.max_trace_bytes, &line, &failed);
  line.Clear();
  if (!failed.empty() && !o.keep_going) {
    for (const std::string& f : failed) {
      std::fprintf(stderr, "gpuspy import: %s; nothing imported (--keep-going imports the files that read)\n",
                   f.c_str());
    }
    return 1;
  }
  for (const std::string& f : failed) {
    std::fprintf(stderr, "gpuspy import: WARNING: SKIPPED %s (--keep-going: the other files are imported, "
                         "the exit code is 1)\n", f.c_str());
  }

  std::vector<importers::RankedFile> ranked;
  std::set<std::string> contents;  // the same bytes twice are imported once (below), not two ranks
  for (const ReadTrace& r : traces) {
    if (contents.insert(r.sha256).second) ranked.push_back(importers::RankOf(r.path, r.index, r.trace));
  }
  if (std::optional<std::string> why = importers::NotOneJob(ranked)) {
    std::fprintf(stderr, "gpuspy import: %s; nothing imported\n", why->c_str());
    return 2;
  }

  QueryClient client(g.collector, g.timeout_s);
  v1::FindImportsRequest find;
  for (const ReadTrace& r : traces) find.add_content_sha256(r.sha256);
  v1::FindImportsResponse found;
  if (!traces.empty() && !client.Call(&v1::Query::Stub::FindImports, find, &found)) return 1;
  std::multimap<std::string, v1::ImportMatch> stored;
  for (const v1::ImportMatch& m : found.matches()) stored.emplace(m.content_sha256(), m);

  Json json = Json::object();
  std::vector<v1::ImportMatch> replaced;
  std::vector<const ReadTrace*> todo;
  std::map<std::string, std::string> seen;  // sha256 -> the file that had it first
  for (const ReadTrace& r : traces) {
    if (auto [it, fresh] = seen.emplace(r.sha256, r.path); !fresh) {
      std::fprintf(stderr, "gpuspy import: %s: the same content as %s; imported once\n", r.path.c_str(),
                   it->second.c_str());
      continue;
    }
    auto [first, last] = stored.equal_range(r.sha256);
    if (first != last && !o.replace) {
      std::fprintf(stderr, "gpuspy import: %s: already imported as job '%s' (process %llu); not imported "
                           "again (--replace replaces it)\n", r.path.c_str(), first->second.job_id().c_str(),
                   static_cast<unsigned long long>(first->second.process_id()));
      json["already_imported"].push_back({{"file", r.path}, {"job", first->second.job_id()}});
      continue;
    }
    for (auto it = first; it != last; ++it) replaced.push_back(it->second);
    todo.push_back(&r);
  }
  // --replace: the earlier copies go before the new ones arrive (the collector refuses a second
  // process with the same content); every file has been read by now, so only a failing send can
  // still leave the job without either.
  if (!DeleteProcesses(client, replaced, false)) {
    std::fprintf(stderr, "gpuspy import: nothing imported: the earlier imports could not be replaced\n");
    return 1;
  }
  for (const v1::ImportMatch& m : replaced) {
    std::fprintf(stderr, "gpuspy import: replaced the earlier import in job '%s' (process %llu)\n",
                 m.job_id().c_str(), static_cast<unsigned long long>(m.process_id()));
  }

  Table t({"FILE", ">RANK", ">EVENTS", ">KERNELS", ">API CALLS", ">SKIPPED", ">B/EVENT"});
  std::vector<std::string> skip_lines;
  std::vector<const ReadTrace*> sent;
  for (const ReadTrace* r : todo) {
    const v1::ProcessIdentity id = IdentityOf(*r, job);
    const size_t chunks = r->trace.events.size() / kEventsPerBatch + 1;
    sent.push_back(r);
    line.Show(absl::StrCat("importing ", std::filesystem::path(r->path).filename().string(), ": sending ",
                           analysis::CountOf(r->trace.events.size(), "event", "events"), " to gpuspyd"),
              /*phase=*/true);
    UploadOptions upload;
    upload.thread_names = &r->trace.thread_names;  // the timeline's lane names
    absl::StatusOr<UploadResult> up =
        UploadEvents(g.collector, id, r->trace.strings, r->trace.events.Split(chunks), upload);
    line.Clear();
    if (!up.ok()) {
      std::fprintf(stderr, "gpuspy import: %s: %s\n", r->path.c_str(), std::string(up.status().message()).c_str());
      // Refused at Hello: another `gpuspy import` of this file stored it or is storing it now.
      // That copy is theirs, not this import's to roll back.
      if (absl::IsAlreadyExists(up.status())) sent.pop_back();
      RollBack(client, sent, job);
      return 1;
    }
    uint64_t skipped = 0;
    for (const auto& [why, n] : r->trace.stats.skipped) skipped += n;
    char per_event[32];
    std::snprintf(per_event, sizeof(per_event), "%.1f",
                  up->events > 0 ? static_cast<double>(up->wire_bytes) / up->events : 0.0);
    t.Add({r->path, std::to_string(id.rank()), std::to_string(up->events),
           std::to_string(r->trace.events.kernels.size()), std::to_string(r->trace.events.apis.size()),
           std::to_string(skipped), per_event});
    json["imported"].push_back(r->path);
    json["files"].push_back(DescribeFile(*r, id, *up));
    if (skipped > 0) skip_lines.push_back(absl::StrCat("skipped in ", r->path, ": ", TopSkipReasons(*r)));
    if (r->trace.stats.cut_strings > 0) skip_lines.push_back(importers::CutStringsLine(r->path, r->trace.stats.cut_strings));
    if (!r->trace.stats.not_exported.empty()) {
      // A gpuspy export read back: the job it came from held these too.
      uint64_t left_out = 0;
      std::string list;
      for (const auto& [what, n] : r->trace.stats.not_exported) {
        left_out += n;
        absl::StrAppend(&list, list.empty() ? "" : ", ", n, " ", what);
      }
      skip_lines.push_back(absl::StrCat(
          "fewer events than their source: the gpuspy export that wrote ", r->path, " counted ",
          left_out, " event", left_out == 1 ? "" : "s",
          " that a re-import cannot have (no place for them in the Chrome/Kineto format, or not "
          "read back): ", list));
    }
  }
  // The job's own step pattern, once its processes exist; its steps are found again with it.
  if (!o.step_pattern.empty() && !sent.empty()) {
    v1::SetStepPatternRequest req;
    req.set_job_id(job);
    req.set_step_pattern(o.step_pattern);
    v1::SetStepPatternResponse resp;
    if (!client.Call(&v1::Query::Stub::SetStepPattern, req, &resp)) {
      RollBack(client, sent, job);
      return 1;
    }
    json["step_pattern"] = resp.step_pattern();
    json["nvtx_steps"] = resp.nvtx_steps();
  }
  for (const std::string& f : failed) json["skipped"].push_back(f);
  if (g.json) {
    json["job"] = job;
    PrintJson(json);
  } else if (!todo.empty()) {
    t.Print(std::cout);
    for (const std::string& line : skip_lines) std::cout << line << "\n";
    if (!o.step_pattern.empty()) {
      std::cout << "steps found with --step-pattern '" << o.step_pattern << "' (the job's own from now on)\n";
    }
    std::cout << "\nimported as job '" << job << "': gpuspy report --job " << job << "\n";
  }
  return failed.empty() ? 0 : 1;
}

RegisteredCommand RegisterImportCommand(CLI::App& app, const GlobalOptions& g) {
  struct Options {
    ImportOptions im;
    AnalyzeOptions an;  // --offline, and the options it shares with `gpuspy analyze`
    bool offline = false;
  };
  auto o = std::make_shared<Options>();
  auto* import = app.add_subcommand(
      "import", "Import PyTorch profiler traces (*.pt.trace.json[.gz]); several files = ranks of one job");
  import->add_option("files", o->im.files, "Trace files")->required()->check(CLI::ExistingFile);
  import->add_option("--job", o->im.job, "Job id (default: one file's name; for several, the name they share less the rank, "
                 "else their directory)");
  import->add_flag("--offline", o->offline, "Analyse here instead (gpuspy analyze)");
  import->add_flag("--replace", o->im.replace,
                   "Files imported before (same content) replace their earlier copy instead of "
                   "being skipped");
  AddOfflineOptions(import, &o->an);
  AddStepPatternOption(import, &o->im.step_pattern);
  import->footer("A file whose content the collector holds already is skipped (\"already imported as "
                 "job J\"). If any file does not read, nothing is imported (exit 1); --keep-going "
                 "imports the others, names the skipped ones on stderr and still exits 1.");
  return {import, [&g, o] {
            if (o->offline) {
              o->an.files = o->im.files;
              o->an.job = o->im.job;
              o->an.step_pattern = o->im.step_pattern;
              return Analyze(g, o->an);
            }
            o->im.keep_going = o->an.keep_going;  // one --keep-going flag, shared with --offline
            o->im.max_trace_bytes = o->an.max_trace_bytes;
            return Import(g, o->im);
          }};
}

}  // namespace gpuspy::cli
