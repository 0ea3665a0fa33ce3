// `gpuspy events`: raw events of a job in a time window, read page by page.
#include "viewer/cli/commands.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>

#include "viewer/cli/command_registry.h"
#include "viewer/cli/format.h"
#include "viewer/cli/json_output.h"
#include "viewer/cli/query_client.h"
#include "viewer/cli/rank_option.h"

namespace gpuspy::cli {
namespace {

// What one request asks for at most: gpuspyd's cap on a page (event_pages.h).
constexpr uint64_t kEventsPerPage = 100'000;

// One page's events of one process, a line each.
void PrintEvents(const v1::ProcessEvents& p) {
  for (const auto& ev : p.events()) {
    std::string line;
    switch (ev.kind_case()) {
      case v1::Event::kKernel:
        line = std::to_string(ev.kernel().start_ns()) + "  " +
               FormatDuration(ev.kernel().end_ns() - ev.kernel().start_ns()) + "  kernel  stream " +
               std::to_string(ev.kernel().stream().stream_id()) + "  " + ev.kernel().name();
        break;
      case v1::Event::kMemcpy:
        line = std::to_string(ev.memcpy().start_ns()) + "  " +
               FormatDuration(ev.memcpy().end_ns() - ev.memcpy().start_ns()) + "  memcpy  " +
               v1::CopyKind_Name(ev.memcpy().copy_kind()) + " " + FormatBytes(ev.memcpy().bytes()) +
               (ev.memcpy().async() ? " async" : " sync");
        break;
      case v1::Event::kMemset:
        line = std::to_string(ev.memset().start_ns()) + "  " +
               FormatDuration(ev.memset().end_ns() - ev.memset().start_ns()) + "  memset  " +
               FormatBytes(ev.memset().bytes());
        break;
      case v1::Event::kSync:
        line = std::to_string(ev.sync().start_ns()) + "  " +
               FormatDuration(ev.sync().end_ns() - ev.sync().start_ns()) + "  sync    " +
               v1::SyncKind_Name(ev.sync().sync_kind());
        break;
      case v1::Event::kMemory:
        line = std::to_string(ev.memory().timestamp_ns()) + "  -  memory  " +
               v1::MemoryOpKind_Name(ev.memory().op()) + " " + FormatBytes(ev.memory().bytes());
        break;
      case v1::Event::kApi:
        line = std::to_string(ev.api().start_ns()) + "  " +
               FormatDuration(ev.api().end_ns() - ev.api().start_ns()) + "  api     " +
               ev.api().name() + "  tid " + std::to_string(ev.api().thread_id());
        break;
      case v1::Event::kNvtxRange:
        line = std::to_string(ev.nvtx_range().start_ns()) + "  " +
               FormatDuration(ev.nvtx_range().end_ns() - ev.nvtx_range().start_ns()) + "  nvtx    " +
               ev.nvtx_range().message();
        break;
      case v1::Event::kNvtxMark:
        line = std::to_string(ev.nvtx_mark().timestamp_ns()) + "  -  mark    " +
               ev.nvtx_mark().message();
        break;
      case v1::Event::kOverhead:
        line = std::to_string(ev.overhead().start_ns()) + "  " +
               FormatDuration(ev.overhead().end_ns() - ev.overhead().start_ns()) + "  overhead " +
               ev.overhead().kind();
        break;
      case v1::Event::kGraphLaunch:
        line = std::to_string(ev.graph_launch().start_ns()) + "  " +
               FormatDuration(ev.graph_launch().end_ns() - ev.graph_launch().start_ns()) +
               "  graph   id " + std::to_string(ev.graph_launch().graph_id());
        break;
      case v1::Event::kExternalCorrelation:
        line = "-  -  extcorr correlation " +
               std::to_string(ev.external_correlation().correlation_id()) + " -> external " +
               std::to_string(ev.external_correlation().external_id());
        break;
      case v1::Event::kMemoryPool:
        line = std::to_string(ev.memory_pool().timestamp_ns()) + "  -  mempool " +
               v1::MemoryPoolOp_Name(ev.memory_pool().op()) + " " +
               FormatBytes(ev.memory_pool().size());
        break;
      case v1::Event::kCollective: {
        const v1::Collective& c = ev.collective();
        line = "-  -  collective correlation " + std::to_string(c.correlation_id()) + "  " +
               c.op() + " " + FormatBytes(c.in_bytes()) + " " + c.dtype() + "  group " +
               c.group() + " of " + std::to_string(c.group_size());
        break;
      }
      case v1::Event::kOpWork: {
        const v1::OpWork& w = ev.op_work();
        line = std::to_string(w.start_ns()) + "  " + FormatDuration(w.end_ns() - w.start_ns()) +
               "  work    " + w.op() + " " + w.dtype() + "  " + std::to_string(w.flops()) +
               " FLOP  " + FormatBytes(w.bytes()) + "  tid " + std::to_string(w.thread_id());
        break;
      }
      case v1::Event::kCounterSample: {
        const v1::CounterSample& c = ev.counter_sample();
        auto pct = [](float v) { return v < 0 ? std::string("-") : std::to_string(std::lround(v)) + "%"; };
        line = std::to_string(c.start_ns()) + "  " + FormatDuration(c.end_ns() - c.start_ns()) +
               "  counter device " + std::to_string(c.device_id()) + "  tensor " +
               pct(c.tensor_active_pct()) + "  dram " + pct(c.dram_throughput_pct()) + "  sm " +
               pct(c.sm_active_pct()) + "  gpu " + pct(c.gpu_active_pct());
        break;
      }
      case v1::Event::KIND_NOT_SET:
        continue;
    }
    std::cout << line << "\n";
  }
}

}  // namespace

int Events(const GlobalOptions& g, const EventsOptions& e) {
  QueryClient q(g.collector, g.timeout_s);
  v1::GetEventsRequest req;
  req.set_job_id(e.job);
  req.set_process_id(e.process);
  req.set_from_ns(e.from_ns);
  req.set_to_ns(e.to_ns);
  // Page by page, each printed as it arrives: a job of millions of events is never held here
  // (nor in gpuspyd, which caps a page).
  uint64_t printed = 0;
  uint64_t last_process = 0;
  for (;;) {
    const uint64_t left = e.limit == 0 ? kEventsPerPage : e.limit - printed;
    req.set_limit(static_cast<uint32_t>(std::min<uint64_t>(left, kEventsPerPage)));
    v1::GetEventsResponse resp;
    if (!q.Call(&v1::Query::Stub::GetEvents, req, &resp)) return 1;
    if (g.json) {
      PrintJson(g, resp);
    } else {
      for (const auto& p : resp.processes()) {
        if (p.process_id() != last_process) std::cout << "# process " << p.process_id() << "\n";
        last_process = p.process_id();
        PrintEvents(p);
      }
    }
    for (const auto& p : resp.processes()) printed += static_cast<uint64_t>(p.events_size());
    if (resp.next_cursor().empty()) break;
    if (e.limit != 0 && printed >= e.limit) {
      if (!g.json) {
        std::cout << "# stopped at --limit " << e.limit
                  << " events: narrow --from/--to or raise --limit (0 = every event)\n";
      }
      break;
    }
    req.set_cursor(resp.next_cursor());
  }
  return 0;
}

RegisteredCommand RegisterEventsCommand(CLI::App& app, const GlobalOptions& g) {
  struct Options {
    EventsOptions e;
    int32_t rank = -1;
  };
  auto o = std::make_shared<Options>();
  EventsOptions& e = o->e;
  auto* events = app.add_subcommand("events", "Raw events of a time window");
  events->add_option("--job", e.job, "Job id")->required();
  auto* process = events->add_option("--process", e.process, "Only this process id");
  events->add_option("--rank", o->rank, "Only the process that ran as this rank")
      ->check(CLI::NonNegativeNumber)->excludes(process);
  events->add_option("--from", e.from_ns, "Window start (ns, CUPTI clock)");
  events->add_option("--to", e.to_ns, "Window end (ns)");
  events->add_option("--limit", e.limit, "At most this many events (0 = every event, read page by page)")
      ->capture_default_str();
  return {events, [&g, o] {
            if (!ResolveRank(g, o->e.job, o->rank, &o->e.process)) return 1;
            return Events(g, o->e);
          }};
}

}  // namespace gpuspy::cli
