// Every event of a GetEvents query in one response, following next_cursor page by page: what one
// call answered before GetEvents had pages (issue 22), for tests that compare whole jobs.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>

#include "gpuspy/v1/services.grpc.pb.h"

namespace gpuspy::testing {

inline grpc::Status GetAllEvents(v1::Query::StubInterface* stub, v1::GetEventsRequest request,
                                 v1::GetEventsResponse* out) {
  out->Clear();
  for (;;) {
    grpc::ClientContext ctx;
    v1::GetEventsResponse page;
    grpc::Status st = stub->GetEvents(&ctx, request, &page);
    if (!st.ok()) return st;
    for (v1::ProcessEvents& p : *page.mutable_processes()) {
      // A page may end inside a process: its events continue in the next page's first entry.
      const int n = out->processes_size();
      if (n > 0 && out->processes(n - 1).process_id() == p.process_id()) {
        auto* events = out->mutable_processes(n - 1)->mutable_events();
        for (v1::Event& e : *p.mutable_events()) *events->Add() = std::move(e);
      } else {
        *out->add_processes() = std::move(p);
      }
    }
    if (page.next_cursor().empty()) return grpc::Status::OK;
    request.set_cursor(page.next_cursor());
  }
}

// Every event the collector answers with, over all its jobs: what can still be read (the store
// and import e2e tests count it after kills and damage), in *n; the first failed call's status.
inline grpc::Status ReadableEvents(v1::Query::StubInterface* stub, uint64_t* n) {
  *n = 0;
  grpc::ClientContext ctx;
  v1::ListJobsResponse jobs;
  if (grpc::Status st = stub->ListJobs(&ctx, {}, &jobs); !st.ok()) return st;
  for (const auto& job : jobs.jobs()) {
    v1::GetEventsRequest req;
    req.set_job_id(job.job_id());
    req.set_limit(5'000'000);
    v1::GetEventsResponse resp;
    if (grpc::Status st = GetAllEvents(stub, req, &resp); !st.ok()) return st;
    for (const auto& p : resp.processes()) *n += static_cast<uint64_t>(p.events_size());
  }
  return grpc::Status::OK;
}

}  // namespace gpuspy::testing
