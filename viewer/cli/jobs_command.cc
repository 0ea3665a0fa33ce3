// `gpuspy jobs`: every job one line each, or (--processes) one line per process, with each
// one's state, mode, heartbeat, clock skew and, under overload, refusals.
#include "viewer/cli/commands.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "viewer/cli/command_registry.h"
#include "viewer/cli/format.h"
#include "viewer/cli/json_output.h"
#include "viewer/cli/query_client.h"
#include "viewer/cli/table.h"

namespace gpuspy::cli {
namespace {

uint64_t Refusals(const v1::ProcessInfo& p) {
  return p.overload().streams_refused() + p.overload().batches_refused();
}

void PrintProcesses(const v1::ListJobsResponse& resp, const std::string& job, int64_t now) {
  // Only when the collector turned someone away (overload): the usual table stays as it was.
  bool any_refused = false;
  for (const auto& j : resp.jobs()) {
    for (const auto& p : j.processes()) any_refused |= Refusals(p) > 0;
  }
  std::vector<std::string> header = {"JOB",  ">RANK", "HOST",    ">PID",      "GPUS",
                                     "STATE", "MODE", ">EVENTS", "HEARTBEAT", ">CLOCK SKEW"};
  if (any_refused) header.push_back(">REFUSED");
  Table t(header);
  for (const auto& j : resp.jobs()) {
    if (!job.empty() && j.job_id() != job) continue;
    for (const auto& p : j.processes()) {
      const auto& id = p.identity();
      std::set<std::string> gpus;
      for (const auto& d : id.devices()) gpus.insert(d.name());
      std::string gpu_text = gpus.empty() ? "-" : *gpus.begin();
      if (id.devices_size() > 1) gpu_text = absl::StrCat(id.devices_size(), "x ", gpu_text);
      const bool live = p.state() != "disconnected";
      std::vector<std::string> row = {
          j.job_id(), id.rank() >= 0 ? std::to_string(id.rank()) : "-", id.host(),
          std::to_string(id.pid()), gpu_text, p.state(),
          p.mode() == v1::CAPTURE_MODE_DORMANT ? "ondemand" : "always",
          std::to_string(p.event_count()),
          live ? Ago(p.last_heartbeat_unix_ns(), now) : "-",
          live ? FormatDuration(p.clock_skew_ns()) : "-"};
      if (any_refused) row.push_back(std::to_string(Refusals(p)));
      t.Add(std::move(row));
    }
  }
  t.Print(std::cout);
}

}  // namespace

int JobNames(const GlobalOptions& g) {
  QueryClient q(g.collector, g.timeout_s);
  v1::ListJobsResponse resp;
  if (!q.Call(&v1::Query::Stub::ListJobs, v1::ListJobsRequest(), &resp)) return 1;
  for (const auto& j : resp.jobs()) std::cout << j.job_id() << "\n";
  return 0;
}

int Jobs(const GlobalOptions& g, const std::string& job, bool per_process) {
  QueryClient q(g.collector, g.timeout_s);
  v1::ListJobsResponse resp;
  if (!q.Call(&v1::Query::Stub::ListJobs, v1::ListJobsRequest(), &resp)) return 1;
  if (!job.empty()) {
    // --job narrows every output to that job, --json included.
    auto* jobs = resp.mutable_jobs();
    jobs->erase(std::remove_if(jobs->begin(), jobs->end(),
                               [&](const v1::JobInfo& j) { return j.job_id() != job; }),
                jobs->end());
    if (jobs->empty()) {
      std::fprintf(stderr, "gpuspy: no job '%s'\n", job.c_str());
      return 1;
    }
  }
  if (g.json) {
    PrintJson(g, resp);
    return 0;
  }
  if (resp.jobs().empty()) {
    std::cout << "no jobs yet: run a program under gpuspy (gpuspy run -- python train.py)\n";
    return 0;
  }
  const int64_t now = absl::ToUnixNanos(absl::Now());
  if (per_process) {
    PrintProcesses(resp, job, now);
    return 0;
  }
  Table t({"JOB", ">PROCESSES", "RANKS", "HOSTS", "GPUS", ">EVENTS", ">STEPS", "STATE", "LAST SEEN"});
  for (const auto& j : resp.jobs()) {
    std::set<int> ranks;
    std::set<std::string> hosts, gpus;
    std::map<std::string, int> states;  // live processes by state
    for (const auto& p : j.processes()) {
      if (p.identity().rank() >= 0) ranks.insert(p.identity().rank());
      hosts.insert(p.identity().host());
      for (const auto& d : p.identity().devices()) gpus.insert(d.name());
      if (p.state() != "disconnected") ++states[p.state()];
    }
    std::string state_text;
    for (const auto& [state, n] : states) {
      absl::StrAppend(&state_text, state_text.empty() ? "" : ", ", state, " (", n, ")");
    }
    std::string rank_text = ranks.empty() ? "-"
                            : ranks.size() == 1
                                ? std::to_string(*ranks.begin())
                                : std::to_string(*ranks.begin()) + "-" + std::to_string(*ranks.rbegin());
    std::string gpu_text = gpus.empty() ? "-" : *gpus.begin();
    if (gpus.size() > 1) gpu_text += " +" + std::to_string(gpus.size() - 1);
    t.Add({j.job_id(), std::to_string(j.processes_size()), rank_text,
           std::to_string(hosts.size()), gpu_text, std::to_string(j.event_count()),
           std::to_string(j.step_count()),
           state_text.empty() ? "finished" : state_text,
           Ago(j.last_seen_unix_ns(), now)});
  }
  t.Print(std::cout);
  for (const auto& j : resp.jobs()) {
    if (j.step_pattern().empty()) continue;
    std::cout << "job " << j.job_id() << ": steps are the NVTX ranges matching its own pattern '"
              << j.step_pattern() << "' (gpuspy jobs set-step-pattern " << j.job_id() << " '' for the default)\n";
  }
  return 0;
}

RegisteredCommand RegisterJobsCommand(CLI::App& app, const GlobalOptions& g) {
  struct Options {
    bool processes = false;
    std::string job;
    std::string delete_job, rename_job, rename_to, pattern_job, pattern_re;
    bool delete_force = false;
    bool names = false;
  };
  auto o = std::make_shared<Options>();
  auto* jobs = app.add_subcommand("jobs", "List jobs with their processes, ranks, hosts and state");
  jobs->add_flag("--processes", o->processes,
                 "One line per process: rank, host, GPUs, state, heartbeat, clock skew");
  jobs->add_option("--job", o->job, "Only this job (implies --processes)");
  // For the shell completion (cli_docs.h): the job names alone, one a line. Hidden from --help
  // (group ""): no user needs it typed.
  jobs->add_flag("--names", o->names, "Job names only, one a line")->group("");
  auto* jobs_delete = jobs->add_subcommand(
      "delete", "Delete a job: its events, steps and processes (its owner or an admin)");
  jobs_delete->add_option("job", o->delete_job, "Job id")->required();
  jobs_delete->add_flag("--force", o->delete_force, "Delete it even while processes of the job are connected");
  jobs_delete->footer("Example: gpuspy jobs delete bert-old");
  auto* jobs_rename = jobs->add_subcommand(
      "rename", "Rename a job (its owner or an admin; the new name must be free)");
  jobs_rename->add_option("job", o->rename_job, "Job id")->required();
  jobs_rename->add_option("new_job", o->rename_to, "New job id")->required();
  jobs_rename->footer("Example: gpuspy jobs rename 123456 bert-lr3e-4");
  auto* jobs_pattern = jobs->add_subcommand(
      "set-step-pattern", "Set the RE2 regex over NVTX range names that delimits a job's steps "
                          "(group 1 = the step number), in place of gpuspyd's --step-pattern; its "
                          "stored steps are found again at once ('' = gpuspyd's again; its owner or an admin)");
  jobs_pattern->add_option("job", o->pattern_job, "Job id")->required();
  jobs_pattern->add_option("pattern", o->pattern_re, "RE2 regex matched against the whole range name")->required();
  jobs_pattern->footer("Example: gpuspy jobs set-step-pattern bert 'train_step_(\\d+)'");
  return {jobs, [&g, o, jobs_delete, jobs_rename, jobs_pattern] {
            if (*jobs_delete) return DeleteJob(g, o->delete_job, o->delete_force);
            if (*jobs_rename) return RenameJob(g, o->rename_job, o->rename_to);
            if (*jobs_pattern) return SetStepPattern(g, o->pattern_job, o->pattern_re);
            if (o->names) return JobNames(g);
            return Jobs(g, o->job, o->processes || !o->job.empty());
          }};
}

}  // namespace gpuspy::cli
