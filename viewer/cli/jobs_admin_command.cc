// `gpuspy jobs delete JOB [--force]`, `gpuspy jobs rename JOB NEW` and `gpuspy jobs
// set-step-pattern JOB RE`: the Query service's DeleteJob, RenameJob and SetStepPattern (the
// collector checks who may, and refuses a live job where it must).
#include <cstdio>
#include <iostream>

#include "analysis/step_segmenter.h"
#include "analysis/text_form.h"

#include "viewer/cli/commands.h"
#include "viewer/cli/json_output.h"
#include "viewer/cli/query_client.h"

namespace gpuspy::cli {

int DeleteJob(const GlobalOptions& g, const std::string& job, bool force) {
  QueryClient client(g.collector, g.timeout_s);
  v1::DeleteJobRequest req;
  req.set_job_id(job);
  req.set_force(force);
  v1::DeleteJobResponse resp;
  if (!client.Call(&v1::Query::Stub::DeleteJob, req, &resp)) return 1;
  if (g.json) {
    PrintJson(g, resp);
  } else {
    std::cout << "deleted job '" << job << "': " << analysis::CountOf(resp.processes_deleted(), "process", "processes") << ", "
              << resp.events_deleted() << " events\n";
  }
  return 0;
}

int RenameJob(const GlobalOptions& g, const std::string& job, const std::string& new_job) {
  QueryClient client(g.collector, g.timeout_s);
  v1::RenameJobRequest req;
  req.set_job_id(job);
  req.set_new_job_id(new_job);
  v1::RenameJobResponse resp;
  if (!client.Call(&v1::Query::Stub::RenameJob, req, &resp)) return 1;
  if (g.json) {
    PrintJson(g, resp);
  } else {
    std::cout << "renamed job '" << job << "' to '" << new_job << "' ("
              << analysis::CountOf(resp.processes_moved(), "process", "processes") << ")\n";
  }
  return 0;
}

int SetStepPattern(const GlobalOptions& g, const std::string& job, const std::string& pattern) {
  if (!pattern.empty()) {
    if (absl::Status st = analysis::CheckStepPattern(pattern); !st.ok()) {
      std::fprintf(stderr, "gpuspy jobs set-step-pattern: %s\n", std::string(st.message()).c_str());
      return 2;
    }
  }
  QueryClient client(g.collector, g.timeout_s);
  v1::SetStepPatternRequest req;
  req.set_job_id(job);
  req.set_step_pattern(pattern);
  v1::SetStepPatternResponse resp;
  if (!client.Call(&v1::Query::Stub::SetStepPattern, req, &resp)) return 1;
  if (g.json) {
    PrintJson(g, resp);
  } else {
    std::cout << "job '" << job << "': steps are found with '" << resp.step_pattern() << "'"
              << (pattern.empty() ? " (gpuspyd's)" : "") << ": " << resp.nvtx_steps()
              << " NVTX steps in " << analysis::CountOf(resp.processes(), "process", "processes");
    if (resp.nvtx_steps() == 0) std::cout << " (its steps come from the kernel period, else time windows)";
    std::cout << "\n";
  }
  return 0;
}

}  // namespace gpuspy::cli
