// `gpuspy jobs delete JOB [--force]` and `gpuspy jobs rename JOB NEW`: the Query service's
// DeleteJob and RenameJob (the collector checks who may, and refuses a live job).
#include <iostream>

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
    std::cout << "deleted job '" << job << "': " << resp.processes_deleted() << " processes, "
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
    std::cout << "renamed job '" << job << "' to '" << new_job << "' (" << resp.processes_moved()
              << " processes)\n";
  }
  return 0;
}

}  // namespace gpuspy::cli
