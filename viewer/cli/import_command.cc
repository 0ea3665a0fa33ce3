#include "viewer/cli/import_command.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "client/transport/event_upload.h"
#include "importers/kineto/kineto_reader.h"
#include "viewer/cli/table.h"

namespace gpuspy::cli {
namespace {

constexpr size_t kEventsPerBatch = 4096;

// "rank0.pt.trace.json.gz" -> "rank0"
std::string JobFromFile(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  return name.substr(0, name.find('.'));
}

}  // namespace

int Import(const GlobalOptions& g, const std::string& job_flag, const std::vector<std::string>& files) {
  const std::string job = job_flag.empty() ? JobFromFile(files.front()) : job_flag;
  Table t({"FILE", ">RANK", ">EVENTS", ">KERNELS", ">API CALLS", ">SKIPPED", ">B/EVENT"});
  for (size_t i = 0; i < files.size(); ++i) {
    absl::StatusOr<importers::KinetoTrace> trace = importers::ReadKinetoTrace(files[i]);
    if (!trace.ok()) {
      std::fprintf(stderr, "gpuspy import: %s\n", std::string(trace.status().message()).c_str());
      return 1;
    }
    v1::ProcessIdentity& id = trace->identity;
    std::error_code ec;
    const std::string abs = std::filesystem::absolute(files[i], ec).string();
    id.set_process_key(absl::StrCat("import:", job, ":", abs));
    id.set_job_id(job);
    id.set_host("import");
    id.set_source("import");
    id.add_command_line(abs);
    // Several files are several ranks of one job; a trace without distributedInfo gets its
    // position on the command line.
    if (id.rank() < 0) id.set_rank(static_cast<int32_t>(i));
    const size_t chunks = trace->events.size() / kEventsPerBatch + 1;
    absl::StatusOr<UploadResult> up =
        UploadEvents(g.collector, id, trace->strings, trace->events.Split(chunks));
    if (!up.ok()) {
      std::fprintf(stderr, "gpuspy import: %s: %s\n", files[i].c_str(),
                   std::string(up.status().message()).c_str());
      return 1;
    }
    uint64_t skipped = 0;
    for (const auto& [why, n] : trace->stats.skipped) skipped += n;
    char per_event[32];
    std::snprintf(per_event, sizeof(per_event), "%.1f",
                  up->events > 0 ? static_cast<double>(up->wire_bytes) / up->events : 0.0);
    t.Add({files[i], std::to_string(id.rank()), std::to_string(up->events),
           std::to_string(trace->events.kernels.size()), std::to_string(trace->events.apis.size()),
           std::to_string(skipped), per_event});
  }
  if (!g.json) {
    t.Print(std::cout);
    std::cout << "\nimported as job '" << job << "': gpuspy report --job " << job << "\n";
  } else {
    std::cout << "{\"job\": \"" << job << "\"}\n";
  }
  return 0;
}

}  // namespace gpuspy::cli
