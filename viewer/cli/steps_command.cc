// `gpuspy steps`: the steps of a job (or one process) with their windows and source.
#include "viewer/cli/commands.h"

#include <iostream>
#include <memory>
#include <string>

#include "analysis/step_source.h"
#include "viewer/cli/command_registry.h"
#include "viewer/cli/format.h"
#include "viewer/cli/json_output.h"
#include "viewer/cli/query_client.h"
#include "viewer/cli/rank_option.h"
#include "viewer/cli/report_view.h"
#include "viewer/cli/table.h"

namespace gpuspy::cli {

int Steps(const GlobalOptions& g, const std::string& job, uint64_t process) {
  QueryClient q(g.collector, g.timeout_s);
  v1::ListStepsRequest req;
  req.set_job_id(job);
  req.set_process_id(process);
  v1::ListStepsResponse resp;
  if (!q.Call(&v1::Query::Stub::ListSteps, req, &resp)) return 1;
  if (g.json) {
    PrintJson(g, resp);
    return 0;
  }
  const auto labels = ProcessLabels(q, job);
  // Windows are listed as what they are (analysis/step_source.h): "window 3", not "step 3".
  Table t({">RANK", "KIND", ">NUMBER", ">START (ns)", ">WALL ms", "SOURCE"});
  uint64_t windows = 0;
  for (const auto& s : resp.steps()) {
    windows += analysis::IsTimeWindow(s) ? 1 : 0;
    t.Add({Label(labels, s.process_id()), std::string(analysis::StepNoun(s.source())),
           std::to_string(s.number()), std::to_string(s.start_ns()), Ms(s.end_ns() - s.start_ns()),
           s.source()});
  }
  if (t.empty()) {
    std::cout << "no steps found for job '" << job
              << "' (no NVTX ranges matched the step pattern)\n";
    return 0;
  }
  if (windows == static_cast<uint64_t>(resp.steps_size())) {
    std::cout << "no steps found for job '" << job << "': " << windows << " time windows ("
              << analysis::WindowExplanation(resp.steps(0).source()) << ")\n\n";
  }
  t.Print(std::cout);
  return 0;
}

RegisteredCommand RegisterStepsCommand(CLI::App& app, const GlobalOptions& g) {
  struct Options {
    std::string job;
    uint64_t process = 0;
    int32_t rank = -1;
  };
  auto o = std::make_shared<Options>();
  auto* steps = app.add_subcommand("steps", "List the steps found for a job");
  steps->add_option("--job", o->job, "Job id")->required();
  auto* process = steps->add_option("--process", o->process, "Only this process id");
  steps->add_option("--rank", o->rank, "Only the process that ran as this rank")
      ->check(CLI::NonNegativeNumber)->excludes(process);
  return {steps, [&g, o] {
            if (!ResolveRank(g, o->job, o->rank, &o->process)) return 1;
            return Steps(g, o->job, o->process);
          }};
}

}  // namespace gpuspy::cli
