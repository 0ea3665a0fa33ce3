#include "viewer/cli/spill_command.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "analysis/text_form.h"
#include "client/spill/grpc_batch_sink.h"
#include "client/spill/spill_adoption.h"
#include "client/spill/spill_file.h"
#include "viewer/cli/command_registry.h"
#include "viewer/cli/table.h"

namespace gpuspy::cli {
namespace {

std::string SpillDir(const SpillOptions& s) {
  if (!s.dir.empty()) return s.dir;
  const char* env = std::getenv("GPUSPY_SPILL_DIR");
  return env != nullptr && *env != '\0' ? env : inject::DefaultSpillDir();
}

// "in_use" (its process runs), "left_behind" or "unreadable": as JSON says it.
std::string SpillStateName(const inject::SpillInventoryEntry& e) {
  if (!e.problem.empty()) return "unreadable";
  return e.held ? "in_use" : "left_behind";
}

// The same for people: "left behind", "unreadable: <why>".
std::string State(const inject::SpillInventoryEntry& e) {
  std::string s = SpillStateName(e);
  std::replace(s.begin(), s.end(), '_', ' ');
  return e.problem.empty() ? s : s + ": " + e.problem;
}

void PrintInventory(const std::vector<inject::SpillInventoryEntry>& files, bool json) {
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : files) {
      out.push_back({{"path", e.path},
                     {"state", SpillStateName(e)},
                     {"problem", e.problem},
                     {"process_key", e.owner.process_key()},
                     {"job_id", e.owner.job_id()},
                     {"rank", e.owner.rank()},
                     {"pid", e.owner.pid()},
                     {"batches", e.batches},
                     {"events", e.events},
                     {"bytes", e.bytes}});
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  Table t({"FILE", "JOB", ">RANK", ">PID", ">BATCHES", ">EVENTS", ">BYTES", "STATE"});
  for (const auto& e : files) {
    t.Add({std::filesystem::path(e.path).filename().string(), e.owner.job_id(),
           e.owner.rank() < 0 ? "-" : absl::StrCat(e.owner.rank()), absl::StrCat(e.owner.pid()), absl::StrCat(e.batches),
           absl::StrCat(e.events), absl::StrCat(e.bytes), State(e)});
  }
  t.Print(std::cout);
}

}  // namespace

int Spill(const GlobalOptions& g, const SpillOptions& s) {
  const std::string dir = SpillDir(s);
  if (!s.deliver) {
    const std::vector<inject::SpillInventoryEntry> files = inject::ListSpills(dir);
    PrintInventory(files, g.json);
    int left = 0;
    uint64_t events = 0;
    for (const auto& e : files) {
      if (e.held) continue;
      ++left;
      events += e.events;
    }
    if (!g.json) {
      if (files.empty()) {
        std::printf("no spill files in %s\n", dir.c_str());
      } else if (left > 0) {
        std::printf("%s left behind by ended processes (%s): "
                    "`gpuspy spill --deliver` sends %s to the collector\n",
                    analysis::CountOf(left, "file", "files").c_str(),
                    analysis::CountOf(events, "event", "events").c_str(), left == 1 ? "it" : "them");
      }
    }
    return left == 0 ? 0 : 1;
  }
  inject::AdoptionOptions options;
  options.dir = dir;
  options.connect_timeout = absl::Seconds(g.timeout_s);
  options.ack_timeout = absl::Seconds(g.timeout_s);
  const std::string collector = g.collector;
  const inject::AdoptionResult r = inject::AdoptOrphanSpills(options, [collector] {
    return std::make_unique<inject::GrpcBatchSink>(collector, v1::CAPTURE_MODE_CONTINUOUS);
  });
  if (g.json) {
    std::cout << nlohmann::json{{"files_delivered", r.files_delivered},
                                {"files_left", r.files_left},
                                {"batches_delivered", r.batches_delivered},
                                {"batches_already_stored", r.batches_already_stored},
                                {"events_delivered", r.events_delivered},
                                {"last_problem", r.last_problem}}
                     .dump(2)
              << "\n";
  } else {
    using analysis::CountOf;
    std::printf("delivered %s to %s: %s in %s (%s stored already); %s left\n",
                CountOf(r.files_delivered, "file", "files").c_str(), collector.c_str(),
                CountOf(r.events_delivered, "event", "events").c_str(),
                CountOf(r.batches_delivered, "batch", "batches").c_str(),
                CountOf(r.batches_already_stored, "batch was", "batches were").c_str(),
                CountOf(r.files_left, "file", "files").c_str());
    if (r.files_left > 0 && !r.last_problem.empty()) {
      std::printf("last problem: %s\n", r.last_problem.c_str());
    }
  }
  return r.files_left == 0 ? 0 : 1;
}

RegisteredCommand RegisterSpillCommand(CLI::App& app, const GlobalOptions& g) {
  auto sp = std::make_shared<SpillOptions>();
  auto* spill = app.add_subcommand(
      "spill", "Spill files of this user's processes; --deliver sends what ended ones left behind");
  spill->add_option("--spill-dir", sp->dir, "Spill directory (default $GPUSPY_SPILL_DIR, else "
                                            "/tmp/gpuspy-<uid>/spill)");
  spill->add_flag("--deliver", sp->deliver,
                  "Deliver the files of ended processes to the collector, under their identity");
  return {spill, [&g, sp] { return Spill(g, *sp); }};
}

}  // namespace gpuspy::cli
