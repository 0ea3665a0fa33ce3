// Every event of a GetEvents query in one response, following next_cursor page by page: what one
// call answered before GetEvents had pages (issue 22), for tests that compare whole jobs.
#pragma once

#include <grpcpp/grpcpp.h>

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

}  // namespace gpuspy::testing
