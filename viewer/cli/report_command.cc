#include "viewer/cli/report_command.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "viewer/cli/command_registry.h"
#include "viewer/cli/csv_view.h"
#include "viewer/cli/json_output.h"
#include "viewer/cli/query_client.h"
#include "viewer/cli/rank_option.h"
#include "viewer/cli/rank_view.h"
#include "viewer/cli/report_view.h"

namespace gpuspy::cli {
namespace {

constexpr uint32_t kDefaultLast = 10;  // steps shown when neither --step, --last nor --all

StepPick PickOf(const ReportOptions& r) {
  return {r.step, r.last > 0 ? r.last : kDefaultLast, r.all};
}

bool Summarize(QueryClient& q, const std::string& job, v1::GetJobSummaryResponse* resp) {
  v1::GetJobSummaryRequest req;
  req.set_job_id(job);
  return q.Call(&v1::Query::Stub::GetJobSummary, req, resp);
}

// --ranks: the ranks x steps matrix of verdicts.
int PrintRanks(QueryClient& q, const GlobalOptions& g, const ReportOptions& r) {
  v1::GetJobSummaryResponse resp;
  if (!Summarize(q, r.job, &resp)) return 1;
  if (g.json) {
    PrintJson(g, resp);
    return 0;
  }
  const std::vector<const v1::JobStep*> steps = PickSteps(resp.summary(), PickOf(r));
  if (RanksOf(steps).size() < 2) {
    std::cout << "no cross-rank view of job '" << r.job
              << "': it needs steps that two or more ranks ran, with their ranks known\n";
    return 0;
  }
  std::cout << "job " << r.job << ": primary bottleneck by rank (rows) and step (columns)\n";
  PrintRankMatrix(steps, r.rank, std::cout);
  return 0;
}

}  // namespace

int Report(const GlobalOptions& g, const ReportOptions& r) {
  QueryClient q(g.collector, g.timeout_s);
  uint64_t process = r.process;
  if (!ResolveRank(g, r.job, r.rank, &process)) return 1;
  if (r.ranks && g.csv) {
    std::fprintf(stderr, "gpuspy report: --csv prints the step table, not the --ranks matrix "
                         "(see gpuspy report --help)\n");
    return 2;
  }
  if (r.ranks) return PrintRanks(q, g, r);

  v1::GetStepReportRequest req;
  req.set_job_id(r.job);
  req.set_process_id(process);
  if (r.all) {
    req.set_all(true);
  } else if (r.step >= 0) {
    req.set_step(r.step);
  } else {
    req.set_last(r.last > 0 ? r.last : kDefaultLast);
  }
  v1::GetStepReportResponse resp;
  if (!q.Call(&v1::Query::Stub::GetStepReport, req, &resp)) return 1;
  if (g.json) {
    PrintJson(g, resp);
    return 0;
  }
  if (g.csv) {
    PrintStepCsv(ProcessLabels(q, r.job), resp, std::cout);
    return 0;
  }
  if (resp.reports().empty()) {
    std::cout << "no steps found for job '" << r.job << "'\n";
    return 0;
  }
  std::set<uint64_t> processes;
  std::set<int64_t> numbers;
  for (const v1::StepReport& rep : resp.reports()) {
    processes.insert(rep.step().process_id());
    numbers.insert(rep.step().number());
  }
  // The cross-rank lines cost a job summary: only where there are ranks to compare.
  v1::GetJobSummaryResponse summary;
  const bool cross_rank = (processes.size() > 1 || r.rank >= 0) && Summarize(q, r.job, &summary);
  PrintStepReports(q, r.job, resp, [&] {
    if (!cross_rank) return;
    StepPick every;
    every.all = true;
    std::vector<const v1::JobStep*> shown;
    for (const v1::JobStep* s : PickSteps(summary.summary(), every)) {
      if (numbers.count(s->number()) > 0) shown.push_back(s);
    }
    PrintRankSteps(shown, r.rank, std::cout);
  });
  return 0;
}

RegisteredCommand RegisterReportCommand(CLI::App& app, const GlobalOptions& g) {
  auto r = std::make_shared<ReportOptions>();
  auto* report = app.add_subcommand(
      "report", "Per-step report: where the time went, the bottleneck, evidence and a fix");
  report->add_option("--job", r->job, "Job id")->required();
  auto* step_opt = report->add_option("--step", r->step, "One step number");
  auto* last_opt = report->add_option("--last", r->last, "The last K steps (default 10); on a live job, the last K that every rank has reached");
  auto* all_opt = report->add_flag("--all", r->all, "Every step");
  step_opt->excludes(last_opt)->excludes(all_opt);
  last_opt->excludes(all_opt);
  auto* process_opt = report->add_option("--process", r->process, "Only this process id");
  report->add_option("--rank", r->rank, "Only the process that ran as this rank")
      ->check(CLI::NonNegativeNumber)->excludes(process_opt);
  report->add_flag("--ranks", r->ranks,
                   "Ranks x steps matrix of verdicts (multi-rank jobs); the straggler marked *");
  return {report, [&g, r] { return Report(g, *r); }};
}

}  // namespace gpuspy::cli
